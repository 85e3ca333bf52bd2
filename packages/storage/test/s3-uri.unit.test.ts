import { describe, expect, it } from 'vitest';
import { MAX_S3_KEY_BYTES, StorageError, s3LocationOf, s3UriOf } from '@ito/storage';

function refused(uri: unknown, use?: 'object' | 'prefix'): { reason: string; message: string } {
  try {
    s3LocationOf(uri as string, use);
  } catch (err) {
    if (err instanceof StorageError) return { reason: err.reason, message: err.message };
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('s3:// URIs', () => {
  it('names one bucket and one key', () => {
    expect(s3LocationOf('s3://ito-test/run_1/step-3')).toEqual({ bucket: 'ito-test', key: 'run_1/step-3' });
    expect(s3LocationOf('s3://ito-test/run_1/', 'prefix')).toEqual({ bucket: 'ito-test', key: 'run_1/' });
    expect(s3LocationOf('s3://ito-test/', 'prefix')).toEqual({ bucket: 'ito-test', key: '' });
    expect(s3UriOf('ito-test', 'run_1/step-3')).toBe('s3://ito-test/run_1/step-3');
  });

  it('says what is wrong, never echoing the URI', () => {
    const cases: Array<[string, string]> = [
      ['file:///x', 's3 storage URI does not start with s3://'],
      ['S3://ito-test/k', 's3 storage URI does not start with s3://'],
      ['s3://ito-test', 's3 storage URI must be s3://bucket/key'],
      ['s3://ito-test/', 's3 storage URI names a bucket, not an object'],
      ['s3://ito-test/a/', 's3 storage URI names a prefix, not an object'],
      ['s3://ito-test/a//b', 's3 storage URI has an empty segment (//)'],
      ['s3://ito-test//b', 's3 storage URI has an empty segment (//)'],
      ['s3://ito-test/a/../b', 's3 storage URI has a . or .. segment'],
      ['s3://ito-test/./b', 's3 storage URI has a . or .. segment'],
      ['s3://ito-test/a%2Fb', 's3 storage URI contains NUL, a control character, %, ?, # or a backslash'],
    ];
    for (const [uri, message] of cases) expect(refused(uri), uri).toEqual({ reason: 'invalid_uri', message });
    expect(refused('s3://ito-test/a//', 'prefix').message).toBe('s3 storage URI has an empty segment (//)');
  });

  it('takes bucket names of 3 to 63 lower-case letters, digits, dots and dashes, not starting or ending with either, without ..', () => {
    for (const bucket of ['abc', 'a'.repeat(63), 'my.bucket-1', '0bucket9']) expect(s3LocationOf(`s3://${bucket}/k`).bucket).toBe(bucket);
    for (const bucket of ['ab', 'a'.repeat(64), 'Bad_Bucket', '-bucket', 'bucket-', '.bucket', 'bucket.', 'my..bucket', 'my bucket', '']) {
      expect(refused(`s3://${bucket}/k`).message, bucket).toBe('s3 storage URI does not name a valid bucket');
    }
    // Without a key, the bucket is all that follows the scheme: an invalid one is named as such.
    expect(refused('s3://bucket-').message).toBe('s3 storage URI does not name a valid bucket');
  });

  it('takes keys up to 1024 bytes, counted in bytes, not characters', () => {
    expect(MAX_S3_KEY_BYTES).toBe(1024);
    expect(s3LocationOf(`s3://ito-test/${'k'.repeat(1024)}`).key).toHaveLength(1024);
    expect(refused(`s3://ito-test/${'k'.repeat(1025)}`).message).toBe('s3 storage URI has a key longer than 1024 bytes');
    // 513 two-byte characters: 1026 bytes in a URI shorter than the length bound.
    expect(refused(`s3://ito-test/${'é'.repeat(513)}`).message).toBe('s3 storage URI has a key longer than 1024 bytes');
  });

  it('refuses a URI longer than any valid one, or not a string, before reading it', () => {
    expect(refused(`s3://ito-test/${'k'.repeat(1024 + 80)}`).message).toBe('s3 storage URI is too long or not a string');
    expect(refused(undefined).message).toBe('s3 storage URI is too long or not a string');
    // At exactly the bound the URI is read, and its key found too long.
    const atBound = `s3://ito-test/${'k'.repeat(1024 + 80 - 's3://ito-test/'.length)}`;
    expect(atBound).toHaveLength(1024 + 80);
    expect(refused(atBound).message).toBe('s3 storage URI has a key longer than 1024 bytes');
    // The bound leaves room for the scheme and the longest bucket: a 1024-byte key in one is not cut short.
    const longest = `s3://${'b'.repeat(63)}/${'k'.repeat(1024)}`;
    expect(longest.length).toBeLessThanOrEqual(1024 + 80);
    expect(s3LocationOf(longest).key).toHaveLength(1024);
  });

  it('refuses control characters and characters with a second meaning in a key', () => {
    for (const c of ['\u0000', '\n', '\u007f', '%', '?', '#', '\\']) expect(refused(`s3://ito-test/a${c}b`).reason).toBe('invalid_uri');
  });
});
