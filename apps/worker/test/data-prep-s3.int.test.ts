import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DigestingStream, FileStorageDriver, S3StorageDriver, StorageError, StorageRegistry, configuredStorageRegistry } from '@ito/storage';
import { smallManifest } from '../../../test/support/manifests.js';
import { startS3Server, type TestS3Server } from '../../../test/support/s3-server.js';
import { checkDataRefs } from '../src/stages/data-prep.js';

const fixtures = fileURLToPath(new URL('../../../test/fixtures/dataprep/', import.meta.url));
const evalBatteryDir = fileURLToPath(new URL('../../../test/fixtures/evals/', import.meta.url));
const corpus = readFileSync(join(fixtures, 'corpus.jsonl'), 'utf8').trimEnd().split('\n');
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const REPORT = '{"checked":"ito-evals/v1"}\n';
/** The planted corpus as two shards and a decontamination report, as on disk or in a bucket. */
const LAYOUT: Record<string, string> = {
  'decontamination.json': REPORT,
  'part-0.jsonl': `${corpus.slice(0, 150).join('\n')}\n`,
  'part-1.jsonl': `${corpus.slice(150).join('\n')}\n`,
};
const treeOf = (files: Record<string, string | Buffer>) => {
  const tree = createHash('sha256');
  for (const name of Object.keys(files).sort()) tree.update(`${name}\u0000${sha256(files[name]!)}\n`);
  return tree.digest('hex');
};

let s3: TestS3Server;
let driver: S3StorageDriver;
let storage: StorageRegistry;
let root: string;

beforeAll(async () => {
  s3 = await startS3Server(['ito-data']);
  driver = new S3StorageDriver(s3.options());
  storage = configuredStorageRegistry({ s3: s3.options() });
  root = mkdtempSync(join(tmpdir(), 'ito-dataprep-s3-'));
  for (const [name, text] of Object.entries(LAYOUT)) await driver.write(`s3://ito-data/corpus/${name}`, Buffer.from(text));
  mkdirSync(join(root, 'corpus'));
  for (const [name, text] of Object.entries(LAYOUT)) writeFileSync(join(root, 'corpus', name), text);
}, 60_000);
afterAll(async () => {
  driver?.close();
  await s3?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

function manifestFor(ref: string, digest: string, reportRef: string, storageUri: string) {
  return JSON.parse(
    smallManifest((m) => {
      m.checkpoint.storage = storageUri;
      m.data = [{ ...m.data[0], ref, sha256: digest, decontamination: { ...m.data[0].decontamination, report_ref: reportRef, report_sha256: sha256(REPORT), contaminated_fraction: 0.05 } }];
    }),
  );
}

/** A fact without the fields that name where things are: what must be equal on file:// and s3://. */
function placeless(fact: Record<string, unknown>) {
  const { ref: _r, output_ref: _o, report_ref: _p, run_id: _i, ...rest } = fact;
  return rest;
}

describe('data prep on s3:// refs', () => {
  it('prepares a prefix ref exactly as the same files on disk: same digests, counts and provenance; output under the run`s s3 prefix', async () => {
    const onDisk = await checkDataRefs('run_file', manifestFor(`file://${root}/corpus/`, treeOf(LAYOUT), `file://${root}/corpus/decontamination.json`, `file://${root}/ckpt/`), { evalBatteryDir, storage, fileRoots: [root] });
    const inBucket = await checkDataRefs('run_s3', manifestFor('s3://ito-data/corpus/', treeOf(LAYOUT), 's3://ito-data/corpus/decontamination.json', 's3://ito-data/ckpt/'), { evalBatteryDir, storage, fileRoots: [root] });
    expect(onDisk.ok, JSON.stringify(onDisk)).toBe(true);
    expect(inBucket.ok, JSON.stringify(inBucket)).toBe(true);
    const checked = (o: typeof onDisk) => o.facts.find((f) => f.type === 'DataRefChecked')!.data as Record<string, unknown>;
    expect(checked(inBucket)).toMatchObject({ verified: true, method: 'sha256', sha256: treeOf(LAYOUT), note: 'decontamination report verified' });
    expect(placeless(checked(inBucket))).toEqual(placeless(checked(onDisk)));
    const prepared = (o: typeof onDisk) => o.facts.find((f) => f.type === 'DataPrepared')!.data as unknown as Record<string, unknown>;
    const s3Fact = prepared(inBucket);
    expect(placeless(s3Fact)).toEqual(placeless(prepared(onDisk)));
    expect(s3Fact).toMatchObject({ shards: 2, docs_in: corpus.length });
    expect((s3Fact.removed as Record<string, number>).decontamination).toBeGreaterThan(0);
    expect((s3Fact.removed as Record<string, number>).exact).toBeGreaterThan(0);

    // The prepared shards and the report are objects under <storage>/<run>/data/, and the output digest names them.
    expect(s3Fact.output_ref).toBe('s3://ito-data/ckpt/run_s3/data/0/');
    expect(s3Fact.report_ref).toBe('s3://ito-data/ckpt/run_s3/data/0.report.json');
    expect(await driver.list('s3://ito-data/ckpt/run_s3/')).toEqual([
      's3://ito-data/ckpt/run_s3/data/0.report.json',
      's3://ito-data/ckpt/run_s3/data/0/part-0.jsonl',
      's3://ito-data/ckpt/run_s3/data/0/part-1.jsonl',
    ]);
    const outputs: Record<string, Buffer> = {};
    for (const name of ['part-0.jsonl', 'part-1.jsonl']) outputs[name] = await driver.read(`s3://ito-data/ckpt/run_s3/data/0/${name}`);
    expect(treeOf(outputs)).toBe(s3Fact.output_sha256);
  });

  it('prepares a single object ref as one shard', async () => {
    const ref = 's3://ito-data/corpus/part-1.jsonl';
    const outcome = await checkDataRefs('run_obj', manifestFor(ref, sha256(LAYOUT['part-1.jsonl']!), 's3://ito-data/corpus/decontamination.json', 's3://ito-data/ckpt/'), { evalBatteryDir, storage, fileRoots: [root] });
    expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
    const fact = outcome.facts.find((f) => f.type === 'DataPrepared')!.data as unknown as Record<string, unknown>;
    expect(fact).toMatchObject({ shards: 1, docs_in: corpus.length - 150, output_ref: 's3://ito-data/ckpt/run_obj/data/0/part-1.jsonl' });
    expect(sha256(await driver.read(fact.output_ref as string))).toBe(fact.output_sha256);
  });

  it('refuses a ref whose bytes are not the declared ones, or that is not there, and writes nothing under the run`s prefix', async () => {
    await driver.write('s3://ito-data/tampered/part-0.jsonl', Buffer.from(`${LAYOUT['part-0.jsonl']}{"text":"planted later"}\n`));
    const tampered = await checkDataRefs('run_bad', manifestFor('s3://ito-data/tampered/part-0.jsonl', sha256(LAYOUT['part-0.jsonl']!), 's3://ito-data/corpus/decontamination.json', 's3://ito-data/ckpt/'), { evalBatteryDir, storage, fileRoots: [root] });
    // As on file://, the refusal never carries the digest found: it would be an oracle for the bytes.
    expect(tampered).toMatchObject({ ok: false, code: 'data_policy_violation', reason: '$.data[0].ref does not hash to its declared sha256' });
    const missing = await checkDataRefs('run_bad', manifestFor('s3://ito-data/nothing/', treeOf(LAYOUT), 's3://ito-data/corpus/decontamination.json', 's3://ito-data/ckpt/'), { evalBatteryDir, storage, fileRoots: [root] });
    expect(missing).toMatchObject({ ok: false, reason: '$.data[0].ref cannot be read (no object under that prefix)' });
    const noBucket = await checkDataRefs('run_bad', manifestFor('s3://no-such-bucket/corpus/', treeOf(LAYOUT), 's3://ito-data/corpus/decontamination.json', 's3://ito-data/ckpt/'), { evalBatteryDir, storage, fileRoots: [root] });
    expect(noBucket).toMatchObject({ ok: false, reason: '$.data[0].ref cannot be read (no bucket at that storage URI)' });
    const noReport = await checkDataRefs('run_bad', manifestFor('s3://ito-data/corpus/', treeOf(LAYOUT), 's3://ito-data/corpus/gone.json', 's3://ito-data/ckpt/'), { evalBatteryDir, storage, fileRoots: [root] });
    expect(noReport).toMatchObject({ ok: false, reason: expect.stringContaining('report_ref is missing') });
    expect(await driver.list('s3://ito-data/ckpt/run_bad/')).toEqual([]);
  });

  /** The real driver behind a registry that counts the bytes every read hands data prep. */
  function countingStorage(onChunk: (bytes: number) => void = () => undefined) {
    const real = new S3StorageDriver(s3.options());
    const counting = Object.create(real) as S3StorageDriver;
    const seen = { reads: 0, bytes: 0 };
    counting.readStream = async (uri: string) => {
      seen.reads++;
      const stream = await real.readStream(uri);
      async function* pass() {
        for await (const chunk of stream) {
          seen.bytes += chunk.length;
          onChunk(chunk.length);
          yield chunk;
        }
      }
      return new DigestingStream(pass(), (err) => (err instanceof StorageError ? err : new StorageError('io_failed', 'unexpected')), stream.size);
    };
    return { registry: new StorageRegistry([new FileStorageDriver(), counting]), seen, close: () => real.close() };
  }

  it('a stored ref past its byte bound is refused data_ref_too_large from its listed or declared size, read at most one chunk, naming no size', async () => {
    const MIB = 1024 * 1024;
    const big = Buffer.alloc(16 * MIB, 0x61);
    await driver.write('s3://ito-data/bounded/corpus.jsonl', big);
    const { registry, seen, close } = countingStorage();
    try {
      // A prefix: the listing's sizes pass the bound, so not one object is read.
      const prefix = await checkDataRefs('run_big', manifestFor('s3://ito-data/corpus/', treeOf(LAYOUT), 's3://ito-data/corpus/decontamination.json', 's3://ito-data/ckpt/'), {
        evalBatteryDir,
        storage: registry,
        fileRoots: [root],
        maxBytesPerRef: 100,
      });
      expect(prefix).toMatchObject({ ok: false, code: 'data_ref_too_large', reason: '$.data[0].ref holds more than 100 bytes' });
      expect(seen.reads).toBe(0);
      // One object: its Content-Length passes the bound, so the read stops at its first chunk.
      const object = await checkDataRefs('run_big', manifestFor('s3://ito-data/bounded/corpus.jsonl', sha256(big), 's3://ito-data/corpus/decontamination.json', 's3://ito-data/ckpt/'), {
        evalBatteryDir,
        storage: registry,
        fileRoots: [root],
        maxBytesPerRef: MIB,
      });
      expect(object).toMatchObject({ ok: false, code: 'data_ref_too_large', reason: `$.data[0].ref holds more than ${MIB} bytes` });
      expect(object.ok ? '' : object.reason).not.toContain(String(big.length));
      expect(seen.bytes).toBeGreaterThan(0);
      expect(seen.bytes).toBeLessThan(MIB);
    } finally {
      close();
    }
    expect(await driver.list('s3://ito-data/ckpt/run_big/')).toEqual([]);
  }, 60_000);

  it('an aborted signal stops an s3 read within a chunk: the abort reaches the caller and nothing is written', async () => {
    const big = Buffer.alloc(16 * 1024 * 1024, 0x62);
    await driver.write('s3://ito-data/aborted/corpus.jsonl', big);
    const controller = new AbortController();
    const ended = new Error('the run ended');
    const { registry, seen, close } = countingStorage(() => controller.abort(ended));
    try {
      const run = checkDataRefs('run_abort', manifestFor('s3://ito-data/aborted/corpus.jsonl', sha256(big), 's3://ito-data/corpus/decontamination.json', 's3://ito-data/ckpt/'), {
        evalBatteryDir,
        storage: registry,
        fileRoots: [root],
        signal: controller.signal,
      });
      await expect(run).rejects.toBe(ended);
      expect(seen.bytes).toBeLessThan(1024 * 1024);
    } finally {
      close();
    }
    expect(await driver.list('s3://ito-data/ckpt/run_abort/')).toEqual([]);
  }, 60_000);

  it('a store that dies mid-stream fails data prep with a stable storage error to retry, never a verdict on the data, and writes nothing', async () => {
    const big = Buffer.alloc(48 * 1024 * 1024, 0x61);
    await driver.write('s3://ito-data/big/corpus.jsonl', big);
    // The real driver, with the server killed once the first chunk of the first read has arrived.
    const real = new S3StorageDriver(s3.options({ maxAttempts: 1 }));
    const killing = Object.create(real) as S3StorageDriver;
    let killed = false;
    killing.readStream = async (uri: string) => {
      const stream = await real.readStream(uri);
      async function* cut() {
        for await (const chunk of stream) {
          yield chunk;
          if (!killed) {
            killed = true;
            await s3.kill();
          }
        }
      }
      return new DigestingStream(cut(), (err) => (err instanceof StorageError ? err : new StorageError('io_failed', 'unexpected')));
    };
    const registry = new StorageRegistry([new FileStorageDriver(), killing]);
    try {
      const run = checkDataRefs('run_cut', manifestFor('s3://ito-data/big/corpus.jsonl', sha256(big), 's3://ito-data/corpus/decontamination.json', 's3://ito-data/ckpt/'), { evalBatteryDir, storage: registry, fileRoots: [root] });
      await expect(run).rejects.toMatchObject({ reason: 'io_failed', message: expect.stringMatching(/^s3 storage read failed mid-stream \(/) });
      expect(killed).toBe(true);
    } finally {
      real.close();
      await s3.restart();
    }
    expect(await driver.list('s3://ito-data/ckpt/run_cut/')).toEqual([]);
  }, 60_000);
});
