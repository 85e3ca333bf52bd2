import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NoFollowError, ensureDirectoryNoFollow, openNoFollow } from '@ito/storage';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ito-nofollow-'));
  mkdirSync(join(dir, 'real', 'deep'), { recursive: true });
  writeFileSync(join(dir, 'real', 'deep', 'file'), 'bytes');
  symlinkSync(join(dir, 'real'), join(dir, 'link')); // a symlinked directory higher up
  symlinkSync(join(dir, 'real', 'deep', 'file'), join(dir, 'real', 'deep', 'alias')); // a symlink as the last component
  execFileSync('mkfifo', [join(dir, 'real', 'fifo')]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function reason(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (err) {
    if (err instanceof NoFollowError) return err.reason;
    throw err;
  }
  return 'opened';
}

describe('opening without following a symlink at any component', () => {
  it('opens a regular file and a directory whose every component is real', async () => {
    const file = await openNoFollow(join(dir, 'real', 'deep', 'file'), 'file');
    expect((await file.readFile()).toString()).toBe('bytes');
    await file.close();
    await (await openNoFollow(join(dir, 'real', 'deep'), 'directory')).close();
  });

  it('refuses a symlinked directory higher up, a symlink at the end, a FIFO (without waiting) and a missing path', async () => {
    expect(await reason(() => openNoFollow(join(dir, 'link', 'deep', 'file'), 'file'))).toBe('symlink');
    expect(await reason(() => openNoFollow(join(dir, 'link', 'deep'), 'directory'))).toBe('symlink');
    expect(await reason(() => openNoFollow(join(dir, 'real', 'deep', 'alias'), 'file'))).toBe('symlink');
    expect(await reason(() => openNoFollow(join(dir, 'real', 'fifo'), 'file'))).toBe('not_a_file');
    expect(await reason(() => openNoFollow(join(dir, 'real', 'missing'), 'file'))).toBe('not_found');
    expect(await reason(() => openNoFollow(join(dir, 'real', 'deep', 'file'), 'directory'))).toBe('not_a_directory');
    expect(await reason(() => openNoFollow(`${dir}/real/../link/deep/file`, 'file'))).toBe('not_found');
  });

  it('creates missing directories but never through a symlinked one', async () => {
    await ensureDirectoryNoFollow(join(dir, 'made', 'here'), { create: true });
    expect(await reason(() => ensureDirectoryNoFollow(join(dir, 'link', 'new'), { create: true }))).toBe('symlink');
    expect(existsSync(join(dir, 'real', 'new'))).toBe(false);
    expect(await reason(() => ensureDirectoryNoFollow(join(dir, 'real', 'absent'), { create: false }))).toBe('not_found');
  });
});
