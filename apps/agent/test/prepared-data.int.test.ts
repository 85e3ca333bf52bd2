import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FileStorageDriver, S3StorageDriver, StorageRegistry } from '@ito/storage';
import { startS3Server, type TestS3Server } from '../../../test/support/s3-server.js';
import { stagePreparedData } from '../src/executors/prepared-data.js';
import { makeAssignment } from './support/tasks.js';

/**
 * A trainer on a node cannot open the run's s3:// storage (it holds no credential of the store), so before a
 * training task starts the agent brings the shards data prep wrote for the run onto the node (`ITO_DATA_DIR`),
 * from a real S3-compatible server on loopback.
 */
const STORAGE = 's3://ito-data/runs/';
let s3: TestS3Server;
let store: S3StorageDriver;
let dir: string;
const logs: string[] = [];
const registry = () => new StorageRegistry([new FileStorageDriver(), new S3StorageDriver(s3.options())]);
const limits = (maxDataBytes = 1 << 20) => ({ maxDataBytes, timeoutMs: 20_000 });

beforeAll(async () => {
  s3 = await startS3Server(['ito-data']);
  store = new S3StorageDriver(s3.options());
}, 30_000);
afterAll(async () => {
  store?.close();
  await s3?.stop();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ito-data-'));
  logs.length = 0;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes the run's prepared data as data prep does: shards, and a report the trainer must not read. */
async function prepared(runId: string): Promise<void> {
  const base = `${STORAGE}${runId}/data/`;
  await store.write(`${base}0/corpus.jsonl`, Buffer.from('{"text":"first shard"}\n'));
  await store.write(`${base}1/notes.txt`, Buffer.from('second shard\n'));
  await store.write(`${base}0/report.json`, Buffer.from('{"docs_in":2}'));
  await store.write(`${base}0/.hidden.jsonl`, Buffer.from('{"text":"not a shard"}\n'));
}

describe('the agent brings the run’s prepared data onto the node', () => {
  it('downloads the shards in the store’s key order to files of its own naming, and names the directory', async () => {
    const { spec } = makeAssignment({ checkpoint: { storage: STORAGE } });
    await prepared(spec.run_id);
    const env = await stagePreparedData(spec, dir, registry(), limits(), (l) => logs.push(l));
    expect(env).toEqual({ ITO_DATA_DIR: join(dir, 'data') });
    expect(readdirSync(join(dir, 'data'))).toEqual(['00000.jsonl', '00001.txt']);
    expect(readFileSync(join(dir, 'data', '00000.jsonl'), 'utf8')).toBe('{"text":"first shard"}\n');
    expect(readFileSync(join(dir, 'data', '00001.txt'), 'utf8')).toBe('second shard\n');
    expect(logs).toEqual(["downloaded 2 shard(s) of the run's prepared data, 36 bytes"]);
  });

  it('takes shards only up to its byte bound, and says how many it left in storage', async () => {
    const { spec } = makeAssignment({ checkpoint: { storage: STORAGE } });
    await prepared(spec.run_id);
    const env = await stagePreparedData(spec, dir, registry(), limits(30), (l) => logs.push(l));
    expect(env.ITO_DATA_DIR).toBe(join(dir, 'data'));
    expect(readdirSync(join(dir, 'data'))).toEqual(['00000.jsonl']);
    expect(logs[0]).toContain("1 left in storage past the agent's bound of 30 bytes");
  });

  it('brings nothing for an evaluation, for file:// storage (read in place) or when data prep kept nothing', async () => {
    const evalTask = makeAssignment({ stage: 'eval_pretrain', checkpoint: { storage: STORAGE } }).spec;
    await prepared(evalTask.run_id);
    expect(await stagePreparedData(evalTask, dir, registry(), limits(), (l) => logs.push(l))).toEqual({});
    const onFile = makeAssignment({ checkpoint: { storage: `file://${dir}/store/` } }).spec;
    expect(await stagePreparedData(onFile, dir, registry(), limits(), (l) => logs.push(l))).toEqual({});
    const empty = makeAssignment({ checkpoint: { storage: STORAGE } }).spec;
    expect(await stagePreparedData(empty, dir, registry(), limits(), (l) => logs.push(l))).toEqual({});
    expect(readdirSync(dir)).toEqual([]);
    expect(logs).toEqual([]);
  });

  it('fails the start when the store is gone, naming no key of it, and leaves no partial shard', async () => {
    const { spec } = makeAssignment({ checkpoint: { storage: STORAGE } });
    await prepared(spec.run_id);
    await s3.kill();
    try {
      const error = await stagePreparedData(spec, dir, registry(), { ...limits(), timeoutMs: 5_000 }, (l) => logs.push(l)).catch((e: Error) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(/^the run's prepared data could not be listed|^a shard of the run's prepared data could not be downloaded/);
      expect((error as Error).message).not.toContain(spec.run_id);
      expect(readdirSync(dir).flatMap((d) => readdirSync(join(dir, d)))).toEqual([]);
    } finally {
      await s3.restart();
    }
  }, 30_000);
});
