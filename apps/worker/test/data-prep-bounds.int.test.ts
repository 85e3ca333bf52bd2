import { createHash } from 'node:crypto';
import { closeSync, existsSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultStorageRegistry } from '@ito/storage';
import { smallManifest } from '../../../test/support/manifests.js';
import { seedTenant, startPipeline, submitRun, waitForState, type Pipeline } from '../../../test/support/pipeline.js';
import { checkDataRefs } from '../src/stages/data-prep.js';

const TIB = 1024 ** 4;
const evalBatteryDir = fileURLToPath(new URL('../../../test/fixtures/evals', import.meta.url));
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** A sparse file: its size says `bytes`, but it takes no disk; reading it whole is what the tests must not see. */
function sparseFile(path: string, bytes: number): void {
  const fd = openSync(path, 'w');
  try {
    ftruncateSync(fd, bytes);
  } finally {
    closeSync(fd);
  }
}

/** Every file under `dir`, relative; none when it does not exist. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

function manifestFor(root: string, data: { ref: string; sha256: string; tokens?: number; report_ref?: string; report_sha256?: string }) {
  return JSON.parse(
    smallManifest((m) => {
      m.checkpoint.storage = `file://${root}/ckpt/`;
      m.data = [
        {
          ...m.data[0],
          ref: data.ref,
          sha256: data.sha256,
          ...(data.tokens !== undefined ? { tokens: data.tokens } : {}),
          decontamination: { ...m.data[0].decontamination, ...(data.report_ref ? { report_ref: data.report_ref, report_sha256: data.report_sha256 } : {}), contaminated_fraction: 0 },
        },
      ];
    }),
  );
}

describe('data prep bounds', () => {
  let root: string;
  beforeAll(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'ito-dataprep-bounds-')));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('a ref whose size passes the operator limit is refused data_ref_too_large before it is read, naming no size', async () => {
    const dir = mkdtempSync(join(root, 'huge-'));
    const path = join(dir, 'huge.jsonl');
    sparseFile(path, TIB);
    expect(statSync(path).size).toBe(TIB);
    // 1 TiB of zeros would take many minutes to hash: the test's timeout is the proof it was never read.
    const outcome = await checkDataRefs('run_big', manifestFor(dir, { ref: `file://${path}`, sha256: 'a'.repeat(64) }), {
      evalBatteryDir,
      storage: defaultStorageRegistry(),
      fileRoots: [dir],
      maxBytesPerRef: 1024 ** 3,
    });
    expect(outcome).toMatchObject({ ok: false, code: 'data_ref_too_large', reason: `$.data[0].ref holds more than ${1024 ** 3} bytes` });
    expect(outcome.ok ? '' : outcome.reason).not.toContain(String(TIB));
    expect(filesUnder(join(dir, 'ckpt'))).toEqual([]);
  }, 20_000);

  it('a ref larger than its declared tokens allow is refused, even when its digest is right', async () => {
    const dir = mkdtempSync(join(root, 'declared-'));
    const body = Array.from({ length: 200 }, (_, i) => JSON.stringify({ text: `document number ${i} about topic ${i * 7}` })).join('\n') + '\n';
    const path = join(dir, 'data.jsonl');
    writeFileSync(path, body);
    // 10 tokens allow 640 bytes; the file holds several kilobytes.
    const outcome = await checkDataRefs('run_lie', manifestFor(dir, { ref: `file://${path}`, sha256: sha256(body), tokens: 10 }), {
      evalBatteryDir,
      storage: defaultStorageRegistry(),
      fileRoots: [dir],
    });
    expect(outcome).toMatchObject({ ok: false, code: 'data_ref_too_large', reason: '$.data[0].ref holds more than 640 bytes' });
    expect(filesUnder(join(dir, 'ckpt'))).toEqual([]);
  });

  it('more documents than declared tokens is refused while reading, and the shards already written are removed', async () => {
    const dir = mkdtempSync(join(root, 'docs-'));
    const data = join(dir, 'data');
    mkdirSync(data);
    const shard = (from: number, n: number) => Array.from({ length: n }, (_, i) => `doc ${from + i}`).join('\n') + '\n';
    const files: Record<string, string> = { 'a.txt': shard(0, 5), 'b.txt': shard(5, 200), 'report.json': '{}\n' };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(data, name), text);
    const tree = createHash('sha256');
    for (const name of Object.keys(files).sort()) tree.update(`${name}\u0000${sha256(files[name]!)}\n`);
    // 100 tokens allow 6400 bytes (the files hold fewer) but only 100 documents: the second shard passes it.
    const manifest = manifestFor(dir, { ref: `file://${data}/`, sha256: tree.digest('hex'), tokens: 100, report_ref: `file://${data}/report.json`, report_sha256: sha256('{}\n') });
    const outcome = await checkDataRefs('run_docs', manifest, { evalBatteryDir, storage: defaultStorageRegistry(), fileRoots: [dir] });
    expect(outcome).toMatchObject({ ok: false, code: 'data_ref_too_large', reason: '$.data[0].ref holds more than 100 documents (its declared tokens)' });
    // The first shard was prepared and written before the second passed the bound: it is gone, and no report.
    expect(filesUnder(join(dir, 'ckpt'))).toEqual([]);
  });
});

describe('a cancelled run`s data prep', () => {
  let p: Pipeline;
  let root: string;
  beforeAll(async () => {
    p = await startPipeline('postgres');
    root = realpathSync(mkdtempSync(join(tmpdir(), 'ito-dataprep-cancel-')));
  });
  afterAll(async () => {
    await p?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('stops reading within seconds of the cancel: the job ends and nothing is written under the run`s prefix', async () => {
    // Within every bound, so only the cancel can stop it: 1 TiB of zeros to hash.
    p.res.dataPrepMaxBytesPerRef = 2 * TIB;
    p.res.runWatchMs = 200;
    const path = join(root, 'huge.jsonl');
    sparseFile(path, TIB);
    const seed = await seedTenant(p.api);
    await p.api.admin.setTenantPolicy({ tenantId: seed.tenant.tenant_id, policy: { checkpoint_storage: { schemes: ['s3', 'file'], prefixes: [] }, file_roots: [root] } });
    const manifest = manifestFor(root, { ref: `file://${path}`, sha256: 'b'.repeat(64) });
    const runId = await submitRun(p.api, seed, JSON.stringify(manifest));
    const jobId = `stage:${runId}:data_prep@1`;
    const deadline = Date.now() + 20_000;
    while ((await p.jobs.snapshot('stage.start', jobId))?.state !== 'active') {
      if (Date.now() > deadline) throw new Error('the data-prep job never became active');
      await new Promise((r) => setTimeout(r, 50));
    }

    const c = await p.api.call('POST', '/v1/confirmations', { key: seed.requester, body: { action: 'run.cancel', run_id: runId } });
    await p.api.call('POST', `/v1/confirmations/${c.body.data.confirmation_ref}/approve`, { key: seed.approver });
    const cancel = await p.api.call('POST', `/v1/runs/${runId}/cancel`, { key: seed.requester, body: { confirmation_ref: c.body.data.confirmation_ref }, headers: { 'idempotency-key': `cancel-${runId}` } });
    expect(cancel.status).toBe(200);
    await waitForState(p.api, seed, runId, ['cancelled'], 20_000);

    // The job gives its slot back: it ends (not failed, not retried) saying why.
    const stopBy = Date.now() + 15_000;
    let job = await p.jobs.snapshot('stage.start', jobId);
    while (job?.state !== 'completed' && Date.now() < stopBy) {
      await new Promise((r) => setTimeout(r, 100));
      job = await p.jobs.snapshot('stage.start', jobId);
    }
    expect(job).toMatchObject({ state: 'completed', returnValue: 'stopped: the run no longer runs this stage', attemptsMade: 1 });
    expect(filesUnder(join(root, 'ckpt'))).toEqual([]);
  }, 60_000);
});

describe('a worker shutting down during data prep', () => {
  let p: Pipeline;
  let root: string;
  beforeAll(async () => {
    p = await startPipeline('postgres');
    root = realpathSync(mkdtempSync(join(tmpdir(), 'ito-dataprep-shutdown-')));
  });
  afterAll(async () => {
    await p?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('aborts the in-flight job: the queue closes within seconds and the stage is left to be retried', async () => {
    p.res.dataPrepMaxBytesPerRef = 2 * TIB;
    const path = join(root, 'huge.jsonl');
    sparseFile(path, TIB);
    const seed = await seedTenant(p.api);
    await p.api.admin.setTenantPolicy({ tenantId: seed.tenant.tenant_id, policy: { checkpoint_storage: { schemes: ['s3', 'file'], prefixes: [] }, file_roots: [root] } });
    const runId = await submitRun(p.api, seed, JSON.stringify(manifestFor(root, { ref: `file://${path}`, sha256: 'c'.repeat(64) })));
    const jobId = `stage:${runId}:data_prep@1`;
    const deadline = Date.now() + 20_000;
    while ((await p.jobs.snapshot('stage.start', jobId))?.state !== 'active') {
      if (Date.now() > deadline) throw new Error('the data-prep job never became active');
      await new Promise((r) => setTimeout(r, 50));
    }
    // Hashing 1 TiB takes many minutes: only the abort lets close() return inside the test's time.
    await p.kit.close();
    const run = (await p.api.call('GET', `/v1/runs/${runId}`, { key: seed.requester })).body.data;
    // Not failed, not cancelled: another worker takes the stage up again.
    expect(run.state).toBe('preparing_data');
    expect(filesUnder(join(root, 'ckpt'))).toEqual([]);
  }, 60_000);
});
