import { createHash } from 'node:crypto';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileStorageDriver, StorageError, driverFor, isStorageError, schemeOf } from '@ito/storage';
import { refusalOf } from '../../../test/support/refusal.js';

let dir: string;
const driver = new FileStorageDriver();
const uri = (path: string) => `file://${dir}/${path}`;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ito-storage-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const refusal = (run: () => Promise<unknown>) => refusalOf(StorageError, run);

describe('file:// storage driver', () => {
  it('writes, reads, lists and removes objects', async () => {
    await driver.write(uri('run_a/pretrain/step-10'), Buffer.from('ten'));
    await driver.write(uri('run_a/pretrain/step-20'), Buffer.from('twenty'));
    await driver.write(uri('run_a/eval/step-1'), Buffer.from('one'));
    await driver.write(uri('run_b/pretrain/step-10'), Buffer.from('other run'));

    expect((await driver.read(uri('run_a/pretrain/step-20'))).toString()).toBe('twenty');
    expect(await driver.exists(uri('run_a/pretrain/step-10'))).toBe(true);
    expect(await driver.exists(uri('run_a/pretrain/step-30'))).toBe(false);
    expect(await driver.list(`file://${dir}/run_a/`)).toEqual([uri('run_a/eval/step-1'), uri('run_a/pretrain/step-10'), uri('run_a/pretrain/step-20')]);
    // A prefix is a string prefix of the URI, as in S3, not only a directory.
    expect(await driver.list(`file://${dir}/run_a/pretrain/step-1`)).toEqual([uri('run_a/pretrain/step-10')]);
    expect(await driver.list(`file://${dir}/run_`)).toHaveLength(4);
    expect(await driver.list(`file://${dir}/nothing-here/`)).toEqual([]);

    expect(await driver.remove(uri('run_a/pretrain/step-10'))).toBe(true);
    expect(await driver.remove(uri('run_a/pretrain/step-10'))).toBe(false);
    expect(await driver.exists(uri('run_a/pretrain/step-10'))).toBe(false);
    const missing = await refusal(() => driver.read(uri('run_a/pretrain/step-10')));
    expect(missing.reason).toBe('not_found');
    expect(missing.code).toBe('not_found');
  });

  it('creates directories 0700 and files 0600, and replaces an object whole', async () => {
    const target = uri('deep/er/object');
    await driver.write(target, Buffer.from('first version'));
    await driver.write(target, Buffer.from('second'));
    expect((await stat(join(dir, 'deep'))).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, 'deep/er'))).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, 'deep/er/object'))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(dir, 'deep/er/object'), 'utf8')).toBe('second');
    // No temporary file is left beside the object.
    expect(await readdir(join(dir, 'deep/er'))).toEqual(['object']);
  });

  it('never lists the temporary file of a write in progress', async () => {
    await mkdir(join(dir, 'r'), { recursive: true });
    await writeFile(join(dir, 'r', '.step-5.0123456789ab.tmp'), 'partial');
    await driver.write(uri('r/step-4'), Buffer.from('whole'));
    expect(await driver.list(`file://${dir}/r/`)).toEqual([uri('r/step-4')]);
  });

  it('refuses relative paths, hosts, dot segments, NUL and characters with a second meaning, echoing none of them', async () => {
    const bad = [
      'file://relative/path',
      'file:relative',
      'file://host/abs/path',
      `file://${dir}/../etc/passwd`,
      `file://${dir}/./x`,
      `file://${dir}//x`,
      `file://${dir}/a\u0000b`,
      `file://${dir}/a%2e%2e/b`,
      `file://${dir}/a?b`,
      `file://${dir}/a#b`,
      `file://${dir}/a\\b`,
      `file://${dir}/dir/`,
      `s3://bucket/key`,
    ];
    for (const u of bad) {
      const err = await refusal(() => driver.write(u, Buffer.from('x')));
      expect(err.reason, u).toBe('invalid_uri');
      expect(err.code).toBe('checkpoint_storage_invalid');
      expect(err.message).not.toContain(dir);
      expect(err.message).not.toContain('passwd');
    }
    // Nothing was written anywhere under the directory.
    expect(await readdir(dir)).toEqual([]);
  });

  it('keeps to its roots', async () => {
    const confined = new FileStorageDriver({ roots: [join(dir, 'allowed')] });
    await confined.write(uri('allowed/x'), Buffer.from('ok'));
    expect((await refusal(() => confined.write(uri('allowed-not/x'), Buffer.from('no')))).reason).toBe('outside_root');
    expect((await refusal(() => confined.list(`file://${dir}/`))).reason).toBe('outside_root');
    expect(await readdir(dir)).toEqual(['allowed']);
  });

  it('keeps to any of several roots, a root itself included, however the root is written', async () => {
    const confined = new FileStorageDriver({ roots: [join(dir, 'first'), `${join(dir, 'second')}/`] });
    await confined.write(uri('second/x'), Buffer.from('ok'));
    expect(await confined.list(`file://${dir}/second`)).toEqual([uri('second/x')]);
    const outside = await refusal(() => confined.read(uri('third/x')));
    expect([outside.reason, outside.message]).toEqual(['outside_root', 'storage URI is outside the directories this driver may use']);
    expect(await readdir(dir)).toEqual(['second']);
  });

  it('does not read, remove or list through a symlink, and says a directory is not an object', async () => {
    await writeFile(join(dir, 'secret'), 'not for the driver');
    await mkdir(join(dir, 'ckpt'));
    await symlink(join(dir, 'secret'), join(dir, 'ckpt', 'step-1'));
    expect((await refusal(() => driver.read(uri('ckpt/step-1')))).reason).toBe('not_an_object');
    expect((await refusal(() => driver.remove(uri('ckpt/step-1')))).reason).toBe('not_an_object');
    expect(await driver.exists(uri('ckpt/step-1'))).toBe(false);
    expect(await driver.list(`file://${dir}/ckpt/`)).toEqual([]);
    expect((await lstat(join(dir, 'ckpt', 'step-1'))).isSymbolicLink()).toBe(true);
    expect((await refusal(() => driver.read(uri('ckpt')))).reason).toBe('not_an_object');
    expect((await refusal(() => driver.write(uri('ckpt'), Buffer.from('x')))).reason).toBe('not_an_object');
  });

  it('refuses a file where a directory would have to be, never naming the path', async () => {
    await writeFile(join(dir, 'plain-file'), 'a file where a directory would have to be');
    const err = await refusal(() => driver.write(uri('plain-file/step-1'), Buffer.from('x')));
    expect(err.reason).toBe('not_an_object');
    expect(err.message).not.toContain(dir);
    expect(await readFile(join(dir, 'plain-file'), 'utf8')).toBe('a file where a directory would have to be');
  });

  it('never writes, reads, lists or removes through a symlinked directory at any component', async () => {
    // The attacker's layout: a run's stage directory is a symlink to a victim directory outside the prefix.
    const victim = join(dir, 'victim');
    await mkdir(victim);
    await writeFile(join(victim, 'step-100'), 'victim data');
    await mkdir(join(dir, 'storage', 'run_a'), { recursive: true });
    await symlink(victim, join(dir, 'storage', 'run_a', 'pretrain'));
    const inRun = (name: string) => uri(`storage/run_a/pretrain/${name}`);

    expect((await refusal(() => driver.remove(inRun('step-100')))).reason).toBe('not_an_object');
    expect((await refusal(() => driver.read(inRun('step-100')))).reason).toBe('not_an_object');
    expect((await refusal(() => driver.write(inRun('step-200'), Buffer.from('x')))).reason).toBe('not_an_object');
    expect((await refusal(() => driver.list(`file://${dir}/storage/run_a/pretrain/`))).reason).toBe('not_an_object');
    expect((await refusal(() => driver.exists(inRun('step-100')))).reason).toBe('not_an_object');
    // Listing the run's prefix skips the symlink: nothing of the victim is named as the run's.
    expect(await driver.list(`file://${dir}/storage/run_a/`)).toEqual([]);
    expect(await readdir(victim)).toEqual(['step-100']);
    expect(await readFile(join(victim, 'step-100'), 'utf8')).toBe('victim data');

    // A storage prefix that passes through a symlinked directory higher up is refused just the same.
    await mkdir(join(dir, 'real'));
    await symlink(join(dir, 'real'), join(dir, 'linked'));
    expect((await refusal(() => driver.write(uri('linked/run_b/data/0/shard.jsonl'), Buffer.from('x')))).reason).toBe('not_an_object');
    expect(await readdir(join(dir, 'real'))).toEqual([]);
  });

  it('streams reads with their sha256, writes streams atomically (a failing source leaves nothing), and lists sizes', async () => {
    const bytes = Buffer.alloc(3 * 1024 * 1024, 7);
    async function* pieces(fail: boolean) {
      yield bytes.subarray(0, 1024 * 1024);
      if (fail) throw new Error('source broke');
      yield bytes.subarray(1024 * 1024);
    }
    const sha = createHash('sha256').update(bytes).digest('hex');
    expect(await driver.writeStream(uri('s/whole'), pieces(false))).toEqual({ bytes: bytes.length, sha256: sha });
    const stream = await driver.readStream(uri('s/whole'));
    let seen = 0;
    for await (const chunk of stream) seen += chunk.length;
    expect([seen, stream.sha256()]).toEqual([bytes.length, sha]);
    expect((await refusal(() => driver.writeStream(uri('s/broken'), pieces(true)))).reason).toBe('io_failed');
    expect(await readdir(join(dir, 's'))).toEqual(['whole']);
    expect(await driver.listObjects(`file://${dir}/s/`)).toEqual([{ uri: uri('s/whole'), bytes: bytes.length }]);
    expect((await refusal(() => driver.readStream(uri('s/none')))).reason).toBe('not_found');
  });

  it('takes away the directories a failed write made, and only those, leaving a directory another object lives in', async () => {
    async function* broken() {
      yield Buffer.from('x');
      throw new Error('source broke');
    }
    expect((await refusal(() => driver.writeStream(uri('fresh/run_c/data/0/shard.jsonl'), broken()))).reason).toBe('io_failed');
    expect(await readdir(dir)).not.toContain('fresh');
    await driver.write(uri('kept/run_d/a.txt'), Buffer.from('a'));
    expect((await refusal(() => driver.writeStream(uri('kept/run_d/deeper/b.txt'), broken()))).reason).toBe('io_failed');
    expect(await readdir(join(dir, 'kept', 'run_d'))).toEqual(['a.txt']);
  });

  it('never streams, stream-writes or lists with sizes through a symlink at any component, nor outside the prefix', async () => {
    const victim = join(dir, 'victim');
    await mkdir(victim);
    await writeFile(join(victim, 'step-100'), 'victim data');
    await writeFile(join(dir, 'secret'), 'not for the driver');
    await mkdir(join(dir, 'storage', 'run_a', 'eval'), { recursive: true });
    await symlink(victim, join(dir, 'storage', 'run_a', 'pretrain'));
    await symlink(join(dir, 'secret'), join(dir, 'storage', 'run_a', 'eval', 'report.json'));
    await writeFile(join(dir, 'storage', 'run_a', 'eval', 'kept.json'), '{}');
    await mkdir(join(dir, 'storage', 'run_ab'));
    await writeFile(join(dir, 'storage', 'run_ab', 'neighbour'), 'the neighbour run');
    async function* one() {
      yield Buffer.from('x');
    }

    expect((await refusal(() => driver.readStream(uri('storage/run_a/pretrain/step-100')))).reason).toBe('not_an_object');
    expect((await refusal(() => driver.readStream(uri('storage/run_a/eval/report.json')))).reason).toBe('not_an_object');
    expect((await refusal(() => driver.writeStream(uri('storage/run_a/pretrain/step-200'), one()))).reason).toBe('not_an_object');
    expect((await refusal(() => driver.listObjects(`file://${dir}/storage/run_a/pretrain/`))).reason).toBe('not_an_object');
    // The run's prefix lists its own regular file only: neither the symlinked directory nor the symlinked file, nor run_ab.
    expect(await driver.listObjects(`file://${dir}/storage/run_a/`)).toEqual([{ uri: uri('storage/run_a/eval/kept.json'), bytes: 2 }]);
    expect(await readdir(victim)).toEqual(['step-100']);

    // A prefix above which a directory is a symlink is refused for streamed writes and sized listings alike.
    await mkdir(join(dir, 'real'));
    await symlink(join(dir, 'real'), join(dir, 'linked'));
    expect((await refusal(() => driver.writeStream(uri('linked/run_b/data/0/shard.jsonl'), one()))).reason).toBe('not_an_object');
    expect((await refusal(() => driver.listObjects(`file://${dir}/linked/`))).reason).toBe('not_an_object');
    expect(await readdir(join(dir, 'real'))).toEqual([]);
  });

  it('bounds the cost of a listing', async () => {
    for (let i = 0; i < 5; i++) await driver.write(uri(`many/o${i}`), Buffer.from('x'));
    const small = new FileStorageDriver({ maxListEntries: 3 });
    expect((await refusal(() => small.list(`file://${dir}/many/`))).reason).toBe('too_many_objects');
  });

  it('visits as many entries as its bound allows, and says how many in its refusal', async () => {
    for (let i = 0; i < 3; i++) await driver.write(uri(`three/o${i}`), Buffer.from('x'));
    expect(await new FileStorageDriver({ maxListEntries: 3 }).list(`file://${dir}/three/`)).toHaveLength(3);
    expect((await refusal(() => new FileStorageDriver({ maxListEntries: 2 }).list(`file://${dir}/three/`))).message).toBe('listing visited more than 2 entries');
  });

  it('lists in URI order, skips names no URI could carry, and creates nothing for a missing prefix', async () => {
    const names = ['k', 'j', 'a', 'z', 'b', 'y', 'c', 'x', 'd', 'w'];
    for (const n of names) await driver.write(uri(`sorted/${n}`), Buffer.from('x'));
    await writeFile(join(dir, 'sorted', 'odd%name'), 'x');
    expect(await driver.list(`file://${dir}/sorted/`)).toEqual([...names].sort().map((n) => uri(`sorted/${n}`)));
    expect(await driver.list(`file://${dir}/absent/deeper/`)).toEqual([]);
    expect(await readdir(dir)).toEqual(['sorted']);
  });
});

describe('storage registry', () => {
  it('finds the file driver and refuses schemes it has no driver for, naming only the scheme', async () => {
    expect(driverFor(`file:///tmp/x`).scheme).toBe('file');
    const s3 = (() => {
      try {
        driverFor('s3://bucket/secret-looking-key');
      } catch (err) {
        return err;
      }
      return null;
    })();
    expect(isStorageError(s3, 'unsupported_scheme')).toBe(true);
    expect((s3 as Error).message).toBe('no storage driver for s3:// on this host (available: file://)');
    expect(() => driverFor('no scheme at all')).toThrow('storage URI has no scheme');
    expect(schemeOf('HTTP://x')).toBeNull();
  });
});
