import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultStorageRegistry, removeUnderPrefix } from '@ito/storage';

let dir: string;
const registry = defaultStorageRegistry();

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ito-prefix-removal-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function put(path: string, bytes: string): Promise<void> {
  await mkdir(join(dir, path, '..'), { recursive: true });
  await writeFile(join(dir, path), bytes);
}

describe('removeUnderPrefix on file storage', () => {
  it('removes every object under the prefix and counts them and their bytes, leaving run_10 beside run_1', async () => {
    await put('ck/run_1/pretrain/step-1', '12345');
    await put('ck/run_1/data/0/part.jsonl', '1234567');
    await put('ck/run_10/pretrain/step-1', 'keep');
    expect(await removeUnderPrefix(registry, `file://${dir}/ck/run_1/`)).toEqual({ objects: 2, bytes: 12 });
    expect(await readdir(join(dir, 'ck'))).toContain('run_10');
    expect(await readdir(join(dir, 'ck/run_10/pretrain'))).toEqual(['step-1']);
  });

  it('refuses a prefix without its trailing /, which would reach run_10 too, before listing anything', async () => {
    await put('ck/run_1/step-1', 'x');
    await expect(removeUnderPrefix(registry, `file://${dir}/ck/run_1`)).rejects.toThrow('a prefix to remove under must end in /');
    expect(await readdir(join(dir, 'ck/run_1'))).toEqual(['step-1']);
  });

  it('an empty or missing prefix removes nothing', async () => {
    expect(await removeUnderPrefix(registry, `file://${dir}/nothing/here/`)).toEqual({ objects: 0, bytes: 0 });
  });

  it('never removes through a symlinked directory under the prefix, and does not count what it left', async () => {
    const victim = await mkdtemp(join(tmpdir(), 'ito-victim-'));
    try {
      await writeFile(join(victim, 'precious'), 'victim bytes');
      await put('ck/run_2/own', 'abc');
      await symlink(victim, join(dir, 'ck/run_2/linked'));
      expect(await removeUnderPrefix(registry, `file://${dir}/ck/run_2/`)).toEqual({ objects: 1, bytes: 3 });
      expect(await readdir(victim)).toEqual(['precious']);
    } finally {
      await rm(victim, { recursive: true, force: true });
    }
  });
});
