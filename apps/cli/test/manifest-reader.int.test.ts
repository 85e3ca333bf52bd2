import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { manifestDigest } from '@ito/contracts';
import { MANIFEST_LIMIT_BYTES, readManifestSafely } from '../src/manifest/read-manifest.js';

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

describe('readManifestSafely: what else it refuses, and what it says', () => {
  const refusal = (p: Promise<unknown>) => p.then(() => { throw new Error('expected a refusal'); }, (e: { code: string; message: string; details?: unknown }) => e);

  it('refuses a relative path, saying it must be absolute', async () => {
    await expect(refusal(readManifestSafely('manifest.json'))).resolves.toMatchObject({ code: 'manifest_path_not_absolute', message: 'manifest path must be absolute, got "manifest.json"' });
  });

  it('refuses a symlink anywhere in the path, naming where it leads, and a symlink loop', async () => {
    const real = manifestFile('target.json');
    const link = join(dir, 'link.json');
    symlinkSync(real, link);
    await expect(refusal(readManifestSafely(link))).resolves.toMatchObject({ code: 'manifest_symlink', message: `manifest path ${link} goes through a symlink (it resolves to ${real})` });
    const linkedDir = join(dir, 'linked-dir');
    symlinkSync(dir, linkedDir);
    await expect(refusal(readManifestSafely(join(linkedDir, 'target.json')))).resolves.toMatchObject({ code: 'manifest_symlink' });
    const loop = join(dir, 'loop.json');
    symlinkSync(loop, loop);
    await expect(refusal(readManifestSafely(loop))).resolves.toMatchObject({ code: 'manifest_symlink', message: `manifest path ${loop} contains a symlink loop` });
  });

  it('refuses a FIFO without hanging on it, and a directory', async () => {
    const fifo = join(dir, 'fifo.json');
    execFileSync('mkfifo', ['-m', '0644', fifo]);
    await expect(refusal(readManifestSafely(fifo))).resolves.toMatchObject({ code: 'manifest_not_regular_file', message: `manifest ${fifo} is not a regular file` });
    const d = join(dir, 'a-directory.json');
    mkdirSync(d, { mode: 0o755 });
    chmodSync(d, 0o755);
    await expect(refusal(readManifestSafely(d))).resolves.toMatchObject({ code: 'manifest_not_regular_file' });
  });

  it('names the mode of a file others can write', async () => {
    const p = manifestFile('mode-message.json');
    chmodSync(p, 0o664);
    await expect(refusal(readManifestSafely(p))).resolves.toMatchObject({ message: `manifest ${p} is writable by group or others (mode 0664)` });
  });

  it('refuses a loose directory higher up the path, not only the file`s own', async () => {
    const top = join(dir, 'loose-top');
    mkdirSync(join(top, 'inner'), { recursive: true });
    chmodSync(top, 0o777);
    chmodSync(join(top, 'inner'), 0o755);
    const p = join(top, 'inner', 'm.json');
    writeFileSync(p, EXAMPLE);
    chmodSync(p, 0o644);
    await expect(refusal(readManifestSafely(p))).resolves.toMatchObject({ code: 'manifest_unsafe_permissions', message: `directory ${top} on the manifest's path is writable by group or others without the sticky bit` });
  });

  it.runIf(process.getuid?.() === 0)('refuses a file that belongs to neither the caller nor root (needs root to make one)', async () => {
    const p = manifestFile('foreign.json');
    chownSync(p, 4242, 4242);
    await expect(refusal(readManifestSafely(p))).resolves.toMatchObject({ code: 'manifest_wrong_owner', message: `manifest ${p} belongs to uid 4242, neither you nor root` });
  });

  it('refuses a file over 1 MiB, and reads one of exactly 1 MiB', async () => {
    expect(MANIFEST_LIMIT_BYTES).toBe(1024 * 1024);
    const big = join(dir, 'big.json');
    writeFileSync(big, Buffer.alloc(MANIFEST_LIMIT_BYTES + 1, 0x20));
    chmodSync(big, 0o644);
    await expect(refusal(readManifestSafely(big))).resolves.toMatchObject({
      code: 'manifest_too_large',
      message: `manifest ${big} is ${MANIFEST_LIMIT_BYTES + 1} bytes; the limit is ${MANIFEST_LIMIT_BYTES}`,
      details: { limit: MANIFEST_LIMIT_BYTES },
    });
    // Exactly the limit passes the size checks and is read whole: 1 MiB of white space around an empty object.
    const edge = join(dir, 'edge.json');
    const bytes = Buffer.alloc(MANIFEST_LIMIT_BYTES, 0x20);
    bytes[0] = 0x7b;
    bytes[MANIFEST_LIMIT_BYTES - 1] = 0x7d;
    writeFileSync(edge, bytes);
    chmodSync(edge, 0o644);
    const read = await readManifestSafely(edge);
    expect(read.bytes.length).toBe(MANIFEST_LIMIT_BYTES);
    expect(read.digest).toBe(manifestDigest(bytes));
  });

  it('refuses a manifest with two meanings (a duplicate key) before anything is sent, naming the path', async () => {
    const p = join(dir, 'duplicate.json');
    writeFileSync(p, '{"a": 1, "a": 2}');
    chmodSync(p, 0o644);
    const err = await refusal(readManifestSafely(p));
    // The key is named by its position, never echoed: an unknown key could be anything, a secret included.
    const at = '$["<key #2>"]';
    expect(err).toMatchObject({ code: 'manifest_invalid', details: { issues: [expect.objectContaining({ path: at })] } });
    expect(err.message.startsWith(`manifest ${p} is not accepted at ${at}: not accepted as JSON: duplicate key`)).toBe(true);
  });

  it('says why a path cannot be opened when it is not a missing file', async () => {
    const long = join(dir, `${'x'.repeat(300)}.json`);
    await expect(refusal(readManifestSafely(long))).resolves.toMatchObject({ code: 'manifest_not_regular_file', message: `manifest ${long} cannot be opened (ENAMETOOLONG)` });
  });
});

describe('readManifestSafely against a rival writer, at each step', () => {
  const refusal = (p: Promise<unknown>) => p.then(() => { throw new Error('expected a refusal'); }, (e: { code: string; message: string; details?: unknown }) => e);
  const OLD = new Date(2000, 0, 1);
  const openDescriptors = () => readdirSync('/proc/self/fd').length;

  it('refuses a path swapped for a symlink after it was checked: the open does not follow it', async () => {
    const p = manifestFile('swapped.json');
    const elsewhere = manifestFile('elsewhere.json');
    await expect(refusal(readManifestSafely(p, { beforeOpen: () => { rmSync(p); symlinkSync(elsewhere, p); } }))).resolves.toMatchObject({
      code: 'manifest_symlink',
      message: `manifest ${p} became a symlink`,
    });
  });

  it('says the file is gone when it is removed after it was checked, not that it became a symlink', async () => {
    const p = manifestFile('vanishes.json');
    await expect(refusal(readManifestSafely(p, { beforeOpen: () => rmSync(p) }))).resolves.toMatchObject({ code: 'manifest_not_regular_file', message: `no such file: ${p}` });
  });

  it('refuses a file that grew past the limit after it was measured', async () => {
    const p = manifestFile('grows.json');
    await expect(refusal(readManifestSafely(p, { beforeRead: () => appendFileSync(p, Buffer.alloc(MANIFEST_LIMIT_BYTES, 0x20)) }))).resolves.toMatchObject({
      code: 'manifest_too_large',
      message: `manifest ${p} grew past ${MANIFEST_LIMIT_BYTES} bytes while being read`,
      details: { limit: MANIFEST_LIMIT_BYTES },
    });
  });

  it('refuses a file whose size changed while its modification time was put back', async () => {
    const p = manifestFile('sneaky-append.json');
    utimesSync(p, OLD, OLD);
    const err = await refusal(readManifestSafely(p, { afterRead: () => { appendFileSync(p, ' '); utimesSync(p, OLD, OLD); } }));
    expect(err).toMatchObject({ code: 'manifest_changed_while_reading', message: `manifest ${p} changed while it was being read; read it again when it is stable` });
  });

  it('refuses a read shorter than the file measured, even when size and time are put back before the second look', async () => {
    const p = manifestFile('sneaky-truncate.json');
    utimesSync(p, OLD, OLD);
    const err = await refusal(
      readManifestSafely(p, {
        beforeRead: () => truncateSync(p, 10),
        afterRead: () => { writeFileSync(p, EXAMPLE); utimesSync(p, OLD, OLD); },
      }),
    );
    expect(err).toMatchObject({ code: 'manifest_changed_while_reading' });
  });

  it('refuses bytes that are not UTF-8 inside valid JSON, which the text sent would silently replace', async () => {
    const p = join(dir, 'latin1-in-string.json');
    writeFileSync(p, Buffer.concat([Buffer.from('{"a": "'), Buffer.from([0xe9]), Buffer.from('"}')]));
    chmodSync(p, 0o644);
    await expect(refusal(readManifestSafely(p))).resolves.toMatchObject({ code: 'manifest_invalid', message: `manifest ${p} is not valid UTF-8 text` });
  });

  it('closes its descriptor, after a read and after a refusal', async () => {
    const p = manifestFile('fd.json');
    const bad = manifestFile('fd-bad.json');
    writeFileSync(bad, '{"a": 1, "a": 2}');
    await readManifestSafely(p);
    await refusal(readManifestSafely(bad));
    const before = openDescriptors();
    for (let i = 0; i < 20; i++) {
      await readManifestSafely(p);
      await refusal(readManifestSafely(bad));
    }
    expect(openDescriptors()).toBe(before);
  });

  it.runIf(process.getuid?.() === 0)('accepts a file of the caller or of root, nobody else`s (run as a user, with root to make the files)', async () => {
    const spy = vi.spyOn(process, 'getuid').mockReturnValue(4243);
    try {
      const mine = manifestFile('owned-by-caller.json');
      chownSync(mine, 4243, 4243);
      await expect(readManifestSafely(mine)).resolves.toMatchObject({ digest: manifestDigest(EXAMPLE) });
      const roots = manifestFile('owned-by-root.json');
      await expect(readManifestSafely(roots)).resolves.toMatchObject({ digest: manifestDigest(EXAMPLE) });
      const theirs = manifestFile('owned-by-another.json');
      chownSync(theirs, 4242, 4242);
      await expect(refusal(readManifestSafely(theirs))).resolves.toMatchObject({ code: 'manifest_wrong_owner' });
    } finally {
      spy.mockRestore();
    }
  });
});
