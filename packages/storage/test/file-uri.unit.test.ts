import { describe, expect, it } from 'vitest';
import { MAX_FILE_URI_LENGTH, StorageError, filePathOf, fileUriOf } from '@ito/storage';
import { isSafeSegment } from '../src/file-uri.js';

/** The refusal `filePathOf` throws for `uri`: its reason and message. */
function refused(uri: unknown, use?: 'object' | 'prefix'): { reason: string; message: string } {
  try {
    filePathOf(uri as string, use);
  } catch (err) {
    if (err instanceof StorageError) return { reason: err.reason, message: err.message };
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('file:// URIs', () => {
  it('maps a file URI to exactly one path', () => {
    expect(filePathOf('file:///var/lib/ito/ckpt/run_1/step-3')).toBe('/var/lib/ito/ckpt/run_1/step-3');
    expect(filePathOf('file:///var/lib/ito/', 'prefix')).toBe('/var/lib/ito/');
  });

  it('takes an object by default, and a prefix only when asked: a trailing / names a directory', () => {
    expect(refused('file:///var/lib/ito/')).toEqual({ reason: 'invalid_uri', message: 'file storage URI names a directory, not an object' });
    expect(filePathOf('file:///var/lib/ito', 'prefix')).toBe('/var/lib/ito');
    expect(filePathOf('file:///', 'prefix')).toBe('/');
  });

  it('says what is wrong, never echoing the URI', () => {
    const cases: Array<[string, string]> = [
      ['s3://bucket/key', 'file storage URI does not start with file://'],
      ['FILE:///x', 'file storage URI does not start with file://'],
      ['file://host/abs', 'file storage URI must be file:///absolute/path (no host, no relative path)'],
      ['file:relative', 'file storage URI does not start with file://'],
      ['file:///a/../b', 'file storage URI has a . or .. segment'],
      ['file:///a/./b', 'file storage URI has a . or .. segment'],
      ['file:///a/..', 'file storage URI has a . or .. segment'],
      ['file:///a//b', 'file storage URI has an empty segment (//)'],
      ['file:///a/b%2f', 'file storage URI contains NUL, a control character, %, ?, # or a backslash'],
    ];
    for (const [uri, message] of cases) expect(refused(uri), uri).toEqual({ reason: 'invalid_uri', message });
    expect(refused('file:///a//', 'prefix').message).toBe('file storage URI has an empty segment (//)');
  });

  it('refuses every character with a second meaning, and control characters from NUL to 0x1f and DEL', () => {
    for (const c of ['\u0000', '\u0001', '\n', '\u001f', '\u007f', '%', '?', '#', '\\']) {
      expect(refused(`file:///a/b${c}c`).message).toBe('file storage URI contains NUL, a control character, %, ?, # or a backslash');
    }
    for (const c of [' ', '~', '=', '+', '@', '\u0080', 'é']) expect(filePathOf(`file:///a/b${c}c`)).toBe(`/a/b${c}c`);
  });

  it('takes URIs up to 4096 characters, and refuses a longer one or one that is not a string', () => {
    const at = (n: number) => `file:///${'a'.repeat(n - 'file:///'.length)}`;
    expect(MAX_FILE_URI_LENGTH).toBe(4096);
    expect(filePathOf(at(4096))).toHaveLength(4096 - 'file://'.length);
    expect(refused(at(4097))).toEqual({ reason: 'invalid_uri', message: 'file storage URI is not a string of at most 4096 characters' });
    expect(refused(42).message).toBe('file storage URI is not a string of at most 4096 characters');
  });

  it('writes a path back as the URI that names it', () => {
    expect(fileUriOf('/var/lib/ito/x')).toBe('file:///var/lib/ito/x');
    expect(filePathOf(fileUriOf('/var/lib/ito/x'))).toBe('/var/lib/ito/x');
  });

  it('lists only directory entries a URI could name', () => {
    expect(isSafeSegment('step-3')).toBe(true);
    expect(isSafeSegment('.hidden')).toBe(true);
    for (const name of ['', '.', '..', 'a/b', 'a%b', 'a\nb', 'a?b']) expect(isSafeSegment(name), JSON.stringify(name)).toBe(false);
  });
});
