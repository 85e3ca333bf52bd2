import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedExecutor } from '@ito/agent';
import { S3StorageDriver, configuredStorageRegistry, type StorageRegistry } from '@ito/storage';
import { smallManifest } from '../../../test/support/manifests.js';
import { runEvents, seedTenant, startPipeline, submitRun, waitForState, type Pipeline } from '../../../test/support/pipeline.js';
import { startS3Server, type TestS3Server } from '../../../test/support/s3-server.js';
import type { Planted } from '../../../test/fixtures/dataprep/generator.js';

const fixtures = fileURLToPath(new URL('../../../test/fixtures/dataprep/', import.meta.url));
const corpus = readFileSync(join(fixtures, 'corpus.jsonl'), 'utf8');
const truth = JSON.parse(readFileSync(join(fixtures, 'corpus.truth.json'), 'utf8')) as Planted[];
const planted = (kind: Planted['kind']) => truth.filter((t) => t.kind === kind).length;
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const REPORT = '{"checked":"ito-evals/v1"}\n';

let s3: TestS3Server;
let driver: S3StorageDriver;
let storage: StorageRegistry;
let p: Pipeline;

beforeAll(async () => {
  s3 = await startS3Server(['ito-runs']);
  driver = new S3StorageDriver(s3.options());
  storage = configuredStorageRegistry({ s3: s3.options() });
  await driver.write('s3://ito-runs/datasets/corpus.jsonl', Buffer.from(corpus));
  await driver.write('s3://ito-runs/datasets/corpus.decontamination.json', Buffer.from(REPORT));
  p = await startPipeline('postgres', { storage });
}, 60_000);
afterAll(async () => {
  await p?.close();
  driver?.close();
  await s3?.stop();
});

describe('a run whose data and checkpoints are on s3://', () => {
  it('prepares the data from the bucket, checkpoints into it, and cleanup leaves nothing under the run`s prefix, recording what it removed', async () => {
    const seed = await seedTenant(p.api);
    await p.api.admin.setTenantPolicy({ tenantId: seed.tenant.tenant_id, policy: { checkpoint_storage: { schemes: ['s3'], prefixes: ['s3://ito-runs/ckpt/'] }, max_contaminated_fraction: 0.1 } });
    // The simulated agents write their checkpoint records through the same S3 driver.
    await p.startNodes(seed, () => new SimulatedExecutor({ timeScale: 50_000, progressIntervalMs: 20, storage }));
    const manifest = smallManifest((m) => {
      m.checkpoint.storage = 's3://ito-runs/ckpt/';
      m.data = [
        {
          ...m.data[0],
          ref: 's3://ito-runs/datasets/corpus.jsonl',
          sha256: sha256(corpus),
          decontamination: { ...m.data[0].decontamination, report_ref: 's3://ito-runs/datasets/corpus.decontamination.json', report_sha256: sha256(REPORT), contaminated_fraction: planted('leak') / truth.length },
        },
      ];
    });
    const runId = await submitRun(p.api, seed, manifest);
    await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed']);
    let events = await runEvents(p.api, seed, runId);
    expect(events.at(-1)!.type, JSON.stringify(events.at(-1))).toBe('RunSucceeded');
    const prepared = events.find((e) => e.type === 'DataPrepared')!.data;
    expect(prepared).toMatchObject({
      docs_in: truth.length,
      removed: { exact: planted('exact'), near: planted('near'), decontamination: planted('leak') },
      output_ref: `s3://ito-runs/ckpt/${runId}/data/0/corpus.jsonl`,
    });
    const saved = events.filter((e) => e.type === 'CheckpointSaved');
    expect(saved.length).toBeGreaterThan(0);
    for (const e of saved) expect(e.data.simulated).toBeUndefined();

    const prefix = `s3://ito-runs/ckpt/${runId}/`;
    const before = await driver.listObjects(prefix);
    expect(before.map((o) => o.uri)).toEqual(expect.arrayContaining([prepared.output_ref, prepared.report_ref]));
    expect(before.some((o) => o.uri.startsWith(`${prefix}pretrain/`))).toBe(true);
    // A neighbour run's objects are not the run's to remove.
    await driver.write(`s3://ito-runs/ckpt/${runId}x/keep`, Buffer.from('not this run'));

    const c = await p.api.call('POST', '/v1/confirmations', { key: seed.requester, body: { action: 'run.cleanup', run_id: runId } });
    await p.api.call('POST', `/v1/confirmations/${c.body.data.confirmation_ref}/approve`, { key: seed.approver });
    const cleanup = await p.api.call('POST', `/v1/runs/${runId}/cleanup`, { key: seed.requester, body: { confirmation_ref: c.body.data.confirmation_ref }, headers: { 'idempotency-key': `cleanup-${runId}` } });
    expect(cleanup.body.data.state).toBe('cleaning_up');
    await waitForState(p.api, seed, runId, ['cleaned']);
    expect(await driver.list(prefix)).toEqual([]);
    expect(await driver.list(`s3://ito-runs/ckpt/${runId}x/`)).toEqual([`s3://ito-runs/ckpt/${runId}x/keep`]);
    events = await runEvents(p.api, seed, runId);
    expect(events.at(-1)!).toMatchObject({
      type: 'CleanupCompleted',
      data: { missing: [], booking_released: false, storage: { prefix, objects: before.length, bytes: before.reduce((sum, o) => sum + o.bytes, 0) } },
    });
    expect((await p.api.call('GET', `/v1/bookings/${seed.bookingId}`, { key: seed.requester })).body.data.status).toBe('completed');
  }, 90_000);
});
