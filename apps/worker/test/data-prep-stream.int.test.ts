import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3StorageDriver, configuredStorageRegistry, defaultStorageRegistry } from '@ito/storage';
import { startS3Server, type TestS3Server } from '../../../test/support/s3-server.js';
import { smallManifest } from '../../../test/support/manifests.js';
import { checkDataRefs } from '../src/stages/data-prep.js';

/**
 * A shard's kept lines are streamed to storage as they are decided (prepare-data.ts), in chunks of about 1 MiB:
 * these shards are larger than one chunk, so the output is written in several, and a refusal comes after some
 * were handed to the store.
 */
const evalBatteryDir = fileURLToPath(new URL('../../../test/fixtures/evals', import.meta.url));
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

/** `n` documents of about 1 KB of seeded random words, every tenth a copy of the one before it. */
function documents(n: number): { lines: string[]; firsts: string[] } {
  let seed = 2026;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  const word = () => Array.from({ length: 3 + (next() % 6) }, () => String.fromCharCode(97 + (next() % 26))).join('');
  const lines: string[] = [];
  const firsts: string[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 10 === 9) lines.push(lines[i - 1]!);
    else {
      const line = `${i} ${Array.from({ length: 170 }, word).join(' ')}`;
      lines.push(line);
      firsts.push(line);
    }
  }
  return { lines, firsts };
}

function manifestFor(dir: string, ref: string, bytes: Buffer, storage = `file://${dir}/ckpt/`, report: Record<string, string> = {}) {
  return JSON.parse(
    smallManifest((m) => {
      m.checkpoint.storage = storage;
      m.data = [{ ...m.data[0], ref, sha256: sha256(bytes), tokens: 1_000_000, decontamination: { ...m.data[0].decontamination, ...report, contaminated_fraction: 0 } }];
    }),
  );
}

describe('data prep streams each shard to storage', () => {
  let root: string;
  beforeAll(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'ito-dataprep-stream-')));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('writes a shard larger than one chunk byte for byte as its kept lines, in input order', async () => {
    const dir = mkdtempSync(join(root, 'ok-'));
    const { lines, firsts } = documents(3000);
    const bytes = Buffer.from(`${lines.join('\n')}\n`);
    expect(bytes.length).toBeGreaterThan(2.5 * 1024 * 1024);
    writeFileSync(join(dir, 'shard.txt'), bytes);
    const outcome = await checkDataRefs('run_stream', manifestFor(dir, `file://${dir}/shard.txt`, bytes), { evalBatteryDir, storage: defaultStorageRegistry(), fileRoots: [dir] });
    expect(outcome.ok).toBe(true);
    const written = filesUnder(join(dir, 'ckpt'));
    const shard = written.find((f) => f.endsWith('shard.txt'));
    expect(written.filter((f) => f.endsWith('.tmp'))).toEqual([]);
    // The oracle holds only if nothing but the planted exact copies was removed: the report says so.
    const report = JSON.parse(readFileSync(join(dir, 'ckpt', written.find((f) => f.endsWith('.report.json'))!), 'utf8'));
    expect(report.summary.removed).toEqual({ exact: 300, near: 0, decontamination: 0 });
    const out = readFileSync(join(dir, 'ckpt', shard!));
    expect(out.equals(Buffer.from(`${firsts.join('\n')}\n`))).toBe(true);
  });

  it('a line refused after more than a chunk was streamed leaves nothing under the checkpoint prefix: no object, no temporary file, no directory', async () => {
    const dir = mkdtempSync(join(root, 'bad-'));
    const { lines } = documents(3000);
    const bytes = Buffer.concat([Buffer.from(`${lines.join('\n')}\n`), Buffer.from([0x62, 0xff, 0x0a])]);
    writeFileSync(join(dir, 'shard.txt'), bytes);
    const outcome = await checkDataRefs('run_stream_bad', manifestFor(dir, `file://${dir}/shard.txt`, bytes), { evalBatteryDir, storage: defaultStorageRegistry(), fileRoots: [dir] });
    expect(outcome).toMatchObject({ ok: false, reason: '$.data[0] shard 1 of 1: line 3001 is not valid UTF-8' });
    expect(filesUnder(join(dir, 'ckpt'))).toEqual([]);
    // Not even the directories the shard's write made on its way.
    expect(existsSync(join(dir, 'ckpt'))).toBe(false);
  });
});

describe('data prep streams each shard to s3', () => {
  let s3: TestS3Server;
  let driver: S3StorageDriver;
  let root: string;
  beforeAll(async () => {
    s3 = await startS3Server(['ito-data']);
    driver = new S3StorageDriver(s3.options());
    root = realpathSync(mkdtempSync(join(tmpdir(), 'ito-dataprep-stream-s3-')));
    await driver.write(REPORT.report_ref, Buffer.from(REPORT_TEXT));
  }, 60_000);
  afterAll(async () => {
    driver?.close();
    await s3?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });
  const REPORT_TEXT = '{"checked":"ito-evals/v1"}\n';
  const REPORT = { report_ref: 's3://ito-data/report.json', report_sha256: sha256(REPORT_TEXT) };
  /** Parts of S3's smallest size, so a shard of a few MiB is uploaded in more than one. */
  const storage = () => configuredStorageRegistry({ s3: s3.options({ partSizeBytes: 5 * 1024 * 1024 }) });

  it('writes a shard of several parts, and a shard whose every document is removed as an empty object', async () => {
    const { lines, firsts } = documents(6500);
    const files = { 'a.txt': Buffer.from(`${lines.join('\n')}\n`), 'b.txt': Buffer.from(`${firsts.slice(0, 5).join('\n')}\n`) };
    for (const [name, bytes] of Object.entries(files)) await driver.write(`s3://ito-data/parts/${name}`, bytes);
    const tree = createHash('sha256');
    for (const name of Object.keys(files).sort()) tree.update(`${name}\u0000${sha256(files[name as 'a.txt'])}\n`);
    const manifest = JSON.parse(
      smallManifest((m) => {
        m.checkpoint.storage = 's3://ito-data/ckpt/';
        m.data = [{ ...m.data[0], ref: 's3://ito-data/parts/', sha256: tree.digest('hex'), tokens: 1_000_000, decontamination: { ...m.data[0].decontamination, ...REPORT, contaminated_fraction: 0 } }];
      }),
    );
    const outcome = await checkDataRefs('run_parts', manifest, { evalBatteryDir, storage: storage(), fileRoots: [root] });
    expect(outcome.ok).toBe(true);
    const written = await driver.list('s3://ito-data/ckpt/run_parts/');
    const a = await driver.read(written.find((u) => u.endsWith('/a.txt'))!);
    expect(a.length).toBeGreaterThan(5 * 1024 * 1024);
    expect(a.equals(Buffer.from(`${firsts.join('\n')}\n`))).toBe(true);
    expect((await driver.read(written.find((u) => u.endsWith('/b.txt'))!)).length).toBe(0);
  }, 60_000);

  it('a line refused after more than a part was streamed leaves no object under the run`s prefix', async () => {
    const { lines } = documents(6500);
    const bytes = Buffer.concat([Buffer.from(`${lines.join('\n')}\n`), Buffer.from([0x62, 0xff, 0x0a])]);
    await driver.write('s3://ito-data/bad/shard.txt', bytes);
    const outcome = await checkDataRefs('run_bad', manifestFor(root, 's3://ito-data/bad/shard.txt', bytes, 's3://ito-data/ckpt/', REPORT), { evalBatteryDir, storage: storage(), fileRoots: [root] });
    expect(outcome).toMatchObject({ ok: false, reason: '$.data[0] shard 1 of 1: line 6501 is not valid UTF-8' });
    expect(await driver.list('s3://ito-data/ckpt/run_bad/')).toEqual([]);
  }, 60_000);
});
