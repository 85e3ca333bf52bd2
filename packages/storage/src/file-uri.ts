import { StorageError } from './storage-error.js';

/** Longest `file://` URI accepted; PATH_MAX on Linux is 4096 bytes. */
export const MAX_FILE_URI_LENGTH = 4096;

const SCHEME = 'file://';

/**
 * Characters with a second meaning in a URI or on a shell (percent escapes, query, fragment, backslash) or none
 * in a path (control characters, NUL). Refusing them keeps one URI naming exactly one path, with no decoding.
 */
export const UNSAFE = /[\u0000-\u001f\u007f%?#\\]/;

export type FileUriUse = 'object' | 'prefix';

/**
 * The absolute path a `file:///abs/path` URI names. Refused: another scheme, a host (`file://host/…`), a relative
 * path, empty, `.` or `..` segments, NUL and the characters of {@link UNSAFE}. An object URI may not end in `/`;
 * a prefix may (it then names everything under that directory).
 */
export function filePathOf(uri: string, use: FileUriUse = 'object'): string {
  if (typeof uri !== 'string' || uri.length > MAX_FILE_URI_LENGTH) throw invalid('is not a string of at most 4096 characters');
  if (!uri.startsWith(SCHEME)) throw invalid('does not start with file://');
  const path = uri.slice(SCHEME.length);
  if (!path.startsWith('/')) throw invalid('must be file:///absolute/path (no host, no relative path)');
  if (UNSAFE.test(path)) throw invalid('contains NUL, a control character, %, ?, # or a backslash');
  const segments = path.slice(1).split('/');
  const last = segments.length - 1;
  for (let i = 0; i <= last; i++) {
    const segment = segments[i]!;
    if (segment === '.' || segment === '..') throw invalid('has a . or .. segment');
    if (segment === '' && !(i === last && use === 'prefix')) throw invalid(i === last ? 'names a directory, not an object' : 'has an empty segment (//)');
  }
  return path;
}

export function fileUriOf(path: string): string {
  return `${SCHEME}${path}`;
}

/** True when `name` (one directory entry) could appear in a URI this driver accepts. */
export function isSafeSegment(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !UNSAFE.test(name);
}

function invalid(what: string): StorageError {
  return new StorageError('invalid_uri', `file storage URI ${what}`);
}
