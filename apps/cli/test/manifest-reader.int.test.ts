import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestDigest } from '@ito/contracts';
import { readManifestSafely } from '../src/manifest/read-manifest.js';

const EXAMPLE = readFileSync(new URL('../../../examples/manifest.json', import.meta.url));
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ito-reader-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function manifestFile(name: string): string {
  const p = join(dir, name);
  writeFileSync(p, EXAMPLE);
  chmodSync(p, 0o644);
  return p;
}

describe('readManifestSafely on real files', () => {
  it('returns the exact bytes and their digest', async () => {
    const m = await readManifestSafely(manifestFile('ok.json'));
    expect(m.bytes.equals(EXAMPLE)).toBe(true);
    expect(m.digest).toBe(manifestDigest(EXAMPLE));
  });

  it('refuses a file appended to between the read and the second fstat', async () => {
    const p = manifestFile('grown.json');
    await expect(readManifestSafely(p, { afterRead: () => appendFileSync(p, ' ') })).rejects.toMatchObject({ code: 'manifest_changed_while_reading' });
  });

  it('refuses a same-size rewrite detected by its new mtime', async () => {
    const p = manifestFile('rewritten.json');
    utimesSync(p, new Date(2000, 0, 1), new Date(2000, 0, 1));
    const rewritten = Buffer.from(EXAMPLE);
    rewritten[rewritten.length - 2] = 0x20;
    await expect(readManifestSafely(p, { afterRead: () => writeFileSync(p, rewritten) })).rejects.toMatchObject({ code: 'manifest_changed_while_reading' });
  });

  it('refuses a path with dot segments as not normalised, naming the resolved path to use', async () => {
    const resolved = manifestFile('dotted.json');
    const dotted = `${dir}/../${dir.split('/').pop()}/./dotted.json`;
    const err = await readManifestSafely(dotted).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'manifest_path_not_absolute', details: { resolved_path: resolved } });
    expect((err as Error).message).toMatch(/is absolute but not normalised/);
    expect((err as Error).message).not.toMatch(/must be absolute/);
    expect((err as Error).message.endsWith(`use ${resolved}`)).toBe(true);
  });

  it('says "no such file" for a missing manifest, and what is in the way for a non-directory', async () => {
    await expect(readManifestSafely(join(dir, 'absent.json'))).rejects.toMatchObject({
      code: 'manifest_not_regular_file',
      message: `no such file: ${join(dir, 'absent.json')}`,
    });
    const file = manifestFile('plain.json');
    await expect(readManifestSafely(join(file, 'inner.json'))).rejects.toMatchObject({
      code: 'manifest_not_regular_file',
      message: expect.stringMatching(/goes through something that is not a directory/),
    });
  });

  it('refuses bytes that are not UTF-8, since the text sent would not be the bytes hashed', async () => {
    const p = join(dir, 'latin1.json');
    writeFileSync(p, Buffer.from([0x7b, 0xff, 0x7d]));
    chmodSync(p, 0o644);
    await expect(readManifestSafely(p)).rejects.toMatchObject({ code: 'manifest_invalid' });
  });

  it.each([
    ['group-writable (0664)', 0o664],
    ['writable by group alone (0620)', 0o620],
    ['world-writable (0646)', 0o646],
  ])('refuses a %s file', async (_label, mode) => {
    const p = manifestFile(`mode-${mode.toString(8)}.json`);
    chmodSync(p, mode);
    await expect(readManifestSafely(p)).rejects.toMatchObject({ code: 'manifest_unsafe_permissions', message: expect.stringMatching(/writable by group or others/) });
  });

  it.each([
    ['group-writable (0775)', 0o775],
    ['writable by group alone (0730)', 0o730],
    ['world-writable (0757)', 0o757],
  ])('refuses a file in a %s directory without the sticky bit', async (_label, mode) => {
    const d = join(dir, `dir-${mode.toString(8)}`);
    mkdirSync(d);
    chmodSync(d, mode);
    const p = join(d, 'm.json');
    writeFileSync(p, EXAMPLE);
    chmodSync(p, 0o644);
    await expect(readManifestSafely(p)).rejects.toMatchObject({ code: 'manifest_unsafe_permissions', message: `directory ${d} on the manifest's path is writable by group or others without the sticky bit` });
  });

  it('accepts a group-writable directory that has the sticky bit (others cannot swap the file), as on /tmp', async () => {
    const d = join(dir, 'sticky');
    mkdirSync(d);
    chmodSync(d, 0o1775);
    const p = join(d, 'm.json');
    writeFileSync(p, EXAMPLE);
    chmodSync(p, 0o640);
    await expect(readManifestSafely(p)).resolves.toMatchObject({ digest: manifestDigest(EXAMPLE) });
  });
});
