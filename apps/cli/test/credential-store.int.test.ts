import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readStoredCredential, removeCredential, storeCredential, type StoredCredential } from '../src/credentials/store.js';

/**
 * The credential store on real files: a key others could read is refused as leaked, a file that is not the one
 * `ito login` wrote is refused, and a write is atomic at 0600 in a 0700 directory. No refusal prints the key.
 */
const KEY = 'ito_sk_live_0123456789abcdefghijklmnopqrstuv';
const CREDENTIAL: StoredCredential = { version: 1, api_url: 'http://127.0.0.1:1', key: KEY, stored_at: '2026-12-04T00:00:00.000Z' };
let root: string;
let n = 0;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'ito-creds-'));
  chmodSync(root, 0o700);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A fresh 0700 directory with a credential file holding `content` at `mode`. */
function credentialFile(content: string = JSON.stringify(CREDENTIAL), mode = 0o600): string {
  const dir = join(root, `d${n++}`);
  mkdirSync(dir, { mode: 0o700 });
  chmodSync(dir, 0o700);
  const file = join(dir, 'credentials.json');
  writeFileSync(file, content);
  chmodSync(file, mode);
  return file;
}

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string; details: unknown }> {
  const err = (await p.then(
    () => null,
    (e: unknown) => e,
  )) as { code: string; message: string; details: unknown } | null;
  if (!err) throw new Error('expected a refusal');
  expect(err.message).not.toContain(KEY);
  return { code: err.code, message: err.message, details: err.details };
}

describe('reading the stored credential', () => {
  it('reads what login stored', async () => {
    await expect(readStoredCredential(credentialFile())).resolves.toEqual(CREDENTIAL);
  });

  it('is null when nothing is stored, and an error when the path cannot be looked at', async () => {
    await expect(readStoredCredential(join(root, 'absent', 'credentials.json'))).resolves.toBeNull();
    const file = credentialFile();
    await expect(readStoredCredential(join(file, 'inner.json'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('refuses a symlink or a directory in the credential`s place', async () => {
    const real = credentialFile();
    const link = join(root, `link${n++}.json`);
    symlinkSync(real, link);
    expect(await refusal(readStoredCredential(link))).toEqual({
      code: 'unauthenticated',
      message: `credential file ${link} is not a regular file`,
      details: { hint: 'remove it and run `ito login` again' },
    });
    const dir = join(root, `dir${n++}`);
    mkdirSync(dir, { mode: 0o700 });
    expect((await refusal(readStoredCredential(dir))).message).toBe(`credential file ${dir} is not a regular file`);
  });

  it.each([0o640, 0o604, 0o610, 0o601, 0o700 | 0o020])('refuses a file others could read or use (mode %o) as leaked', async (mode) => {
    const file = credentialFile(undefined, mode);
    const octal = `0${mode.toString(8)}`;
    expect(await refusal(readStoredCredential(file))).toEqual({
      code: 'unauthenticated',
      message: `credential file ${file} has mode ${octal}; it must be 0600`,
      details: { hint: `chmod 600 ${file} (and consider revoking the key)` },
    });
  });

  it.each([0o750, 0o705, 0o710])('refuses a credential in a directory others can enter (mode %o)', async (mode) => {
    const file = credentialFile();
    const dir = join(file, '..');
    chmodSync(dir, mode);
    expect(await refusal(readStoredCredential(file))).toEqual({
      code: 'unauthenticated',
      message: `credential directory ${dir} has mode 0${mode.toString(8)}; it must be 0700`,
      details: { hint: `chmod 700 ${dir}` },
    });
  });

  it.runIf(process.getuid?.() === 0)('refuses a file that belongs to another user (needs root to make one)', async () => {
    const file = credentialFile();
    chownSync(file, 4242, 4242);
    expect(await refusal(readStoredCredential(file))).toEqual({ code: 'unauthenticated', message: `credential file ${file} belongs to another user`, details: { hint: 'remove it and run `ito login` again' } });
  });

  it('refuses a file that is not JSON', async () => {
    const file = credentialFile(`{"key": "${KEY}"`);
    expect(await refusal(readStoredCredential(file))).toEqual({ code: 'unauthenticated', message: `credential file ${file} is not valid JSON`, details: { hint: 'run `ito login` again' } });
  });

  it.each([
    ['null', null],
    ['another version', { ...CREDENTIAL, version: 2 }],
    ['no key', { ...CREDENTIAL, key: undefined }],
    ['a key that is not a string', { ...CREDENTIAL, key: 42 }],
    ['an empty key', { ...CREDENTIAL, key: '' }],
    ['no API address', { ...CREDENTIAL, api_url: undefined }],
    ['an API address that is not a string', { ...CREDENTIAL, api_url: 1 }],
  ])('refuses a credential with %s', async (_label, content) => {
    const file = credentialFile(JSON.stringify(content));
    expect(await refusal(readStoredCredential(file))).toEqual({ code: 'unauthenticated', message: `credential file ${file} is not in the expected format`, details: { hint: 'run `ito login` again' } });
  });
});

describe('storing the credential', () => {
  it('creates a 0700 directory and a 0600 file holding the credential, leaving no temporary file', async () => {
    const dir = join(root, `new${n++}`, 'ito');
    const file = join(dir, 'credentials.json');
    await storeCredential(file, CREDENTIAL);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe(`${JSON.stringify(CREDENTIAL, null, 2)}\n`);
    expect(readdirSync(dir)).toEqual(['credentials.json']);
    await expect(readStoredCredential(file)).resolves.toEqual(CREDENTIAL);
  });

  it('replaces a stored credential whole', async () => {
    const file = credentialFile();
    const next = { ...CREDENTIAL, key: `${KEY}2`, identity: { tenant_id: 'ten_1' } };
    await storeCredential(file, next);
    await expect(readStoredCredential(file)).resolves.toEqual(next);
    expect(readdirSync(join(file, '..'))).toEqual(['credentials.json']);
  });

  it('refuses a directory others can enter, writing nothing', async () => {
    const dir = join(root, `loose${n++}`);
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    const file = join(dir, 'credentials.json');
    expect(await refusal(storeCredential(file, CREDENTIAL))).toEqual({
      code: 'validation_failed',
      message: `credential directory ${dir} has mode 0755; it must be 0700`,
      details: { hint: `chmod 700 ${dir}` },
    });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses to write through a symlink or over a directory', async () => {
    const target = join(root, `target${n++}.json`);
    const dir = join(root, `d${n++}`);
    mkdirSync(dir, { mode: 0o700 });
    const link = join(dir, 'credentials.json');
    symlinkSync(target, link);
    expect(await refusal(storeCredential(link, CREDENTIAL))).toEqual({ code: 'validation_failed', message: `credential path ${link} exists and is not a regular file`, details: undefined });
    expect(existsSync(target)).toBe(false);
    const dir2 = join(root, `d${n++}`);
    mkdirSync(join(dir2, 'credentials.json'), { recursive: true, mode: 0o700 });
    chmodSync(dir2, 0o700);
    expect((await refusal(storeCredential(join(dir2, 'credentials.json'), CREDENTIAL))).code).toBe('validation_failed');
  });
});

describe('descriptors', () => {
  it('a stored credential leaves no descriptor open', async () => {
    const file = join(root, `fd${n++}`, 'credentials.json');
    await storeCredential(file, CREDENTIAL);
    const before = readdirSync('/proc/self/fd').length;
    for (let i = 0; i < 20; i++) await storeCredential(file, CREDENTIAL);
    expect(readdirSync('/proc/self/fd').length).toBe(before);
  });
});

describe('removing the credential', () => {
  it('removes it, and is content when there is nothing to remove', async () => {
    const file = credentialFile();
    await removeCredential(file);
    expect(existsSync(file)).toBe(false);
    await expect(removeCredential(file)).resolves.toBeUndefined();
  });
});
