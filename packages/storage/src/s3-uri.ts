import { UNSAFE } from './file-uri.js';
import { StorageError } from './storage-error.js';

/** S3 allows keys of up to 1024 bytes; a URI is the key plus `s3://` and the bucket. */
export const MAX_S3_KEY_BYTES = 1024;

const SCHEME = 's3://';
/** Bucket names as S3 allows them for path-style and virtual-host access alike (no dots at either end, no `..`). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export interface S3Location {
  bucket: string;
  /** The object key, or for a prefix the key prefix (may be empty: the whole bucket). */
  key: string;
}

export type S3UriUse = 'object' | 'prefix';

/**
 * The bucket and key an `s3://bucket/key` URI names. Refused: another scheme, a bucket S3 would not accept, an
 * empty key for an object, `.` or `..` or empty segments, a key past 1024 bytes, and the characters a file URI
 * refuses (control characters, `%`, `?`, `#`, backslash), so one URI names exactly one key with no decoding and
 * a confinement check on the string is a confinement check on the key.
 */
export function s3LocationOf(uri: string, use: S3UriUse = 'object'): S3Location {
  if (typeof uri !== 'string' || uri.length > MAX_S3_KEY_BYTES + 80) throw invalid('is too long or not a string');
  if (!uri.startsWith(SCHEME)) throw invalid('does not start with s3://');
  const rest = uri.slice(SCHEME.length);
  const slash = rest.indexOf('/');
  const bucket = slash === -1 ? rest : rest.slice(0, slash);
  if (!BUCKET.test(bucket) || bucket.includes('..')) throw invalid('does not name a valid bucket');
  if (slash === -1) throw invalid('must be s3://bucket/key');
  const key = rest.slice(slash + 1);
  if (Buffer.byteLength(key) > MAX_S3_KEY_BYTES) throw invalid(`has a key longer than ${MAX_S3_KEY_BYTES} bytes`);
  if (UNSAFE.test(key)) throw invalid('contains NUL, a control character, %, ?, # or a backslash');
  if (key === '') {
    if (use === 'object') throw invalid('names a bucket, not an object');
    return { bucket, key };
  }
  const segments = key.split('/');
  const last = segments.length - 1;
  for (let i = 0; i <= last; i++) {
    const segment = segments[i]!;
    if (segment === '.' || segment === '..') throw invalid('has a . or .. segment');
    if (segment === '' && !(i === last && use === 'prefix')) throw invalid(i === last ? 'names a prefix, not an object' : 'has an empty segment (//)');
  }
  return { bucket, key };
}

export function s3UriOf(bucket: string, key: string): string {
  return `${SCHEME}${bucket}/${key}`;
}

function invalid(what: string): StorageError {
  return new StorageError('invalid_uri', `s3 storage URI ${what}`);
}
