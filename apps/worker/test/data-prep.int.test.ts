import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedExecutor } from '@ito/agent';
import { redisForTests } from '../../../test/support/db.js';
import { smallManifest } from '../../../test/support/manifests.js';
import { runEvents, seedTenant, startPipeline, submitRun, waitForState, type BackendKind, type Pipeline } from '../../../test/support/pipeline.js';
import type { Planted } from '../../../test/fixtures/dataprep/generator.js';

const redis = redisForTests();
const BACKENDS: Array<{ kind: BackendKind; skip: boolean; why: string }> = [
  { kind: 'redis', skip: !redis.url, why: redis.skipReason ?? '' },
  { kind: 'postgres', skip: false, why: '' },
];

const fixtures = fileURLToPath(new URL('../../../test/fixtures/dataprep/', import.meta.url));
const truth = JSON.parse(readFileSync(join(fixtures, 'corpus.truth.json'), 'utf8')) as Planted[];
const planted = (kind: Planted['kind']) => truth.filter((t) => t.kind === kind).length;
const leakedItems = [...new Set(truth.flatMap((t) => (t.kind === 'leak' ? t.items : [])))].sort();
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/**
 * A directory data ref as an owner would lay it out: the planted corpus in two JSON-lines shards, and the
 * decontamination report beside them. Its sha256 is the tree digest data prep verifies.
 */
function dataDirectory(root: string): { ref: string; sha256: string; report_ref: string; report_sha256: string } {
  const dir = join(root, 'data');
  mkdirSync(dir, { recursive: true });
  const lines = readFileSync(join(fixtures, 'corpus.jsonl'), 'utf8').trimEnd().split('\n');
  writeFileSync(join(dir, 'part-0.jsonl'), `${lines.slice(0, 150).join('\n')}\n`);
  writeFileSync(join(dir, 'part-1.jsonl'), `${lines.slice(150).join('\n')}\n`);
  const report = '{"checked":"ito-evals/v1"}\n';
  writeFileSync(join(dir, 'decontamination.json'), report);
  const files = ['decontamination.json', 'part-0.jsonl', 'part-1.jsonl'];
  const tree = createHash('sha256');
  for (const f of files) tree.update(`${f}\u0000${sha256(readFileSync(join(dir, f)))}\n`);
  return { ref: `file://${dir}/`, sha256: tree.digest('hex'), report_ref: `file://${dir}/decontamination.json`, report_sha256: sha256(report) };
}

function manifestWith(root: string, data: ReturnType<typeof dataDirectory>, contaminatedFraction: number): string {
  return smallManifest((m) => {
    m.checkpoint.storage = `file://${root}/ckpt/`;
    m.data[0] = {
      ...m.data[0],
      ref: data.ref,
      sha256: data.sha256,
      decontamination: { ...m.data[0].decontamination, report_ref: data.report_ref, report_sha256: data.report_sha256, contaminated_fraction: contaminatedFraction },
    };
  });
}

for (const backend of BACKENDS) {
  describe.skipIf(backend.skip)(`data prep on the ${backend.kind} backend${backend.skip ? ` (skipped: ${backend.why})` : ''}`, () => {
    let p: Pipeline;
    let root: string;
    beforeAll(async () => {
      p = await startPipeline(backend.kind);
      root = mkdtempSync(join(tmpdir(), 'ito-dataprep-'));
    });
    afterAll(async () => {
      await p?.close();
      rmSync(root, { recursive: true, force: true });
    });

    async function seeded() {
      const seed = await seedTenant(p.api);
      await p.api.admin.setTenantPolicy({ tenantId: seed.tenant.tenant_id, policy: { checkpoint_storage: { schemes: ['s3', 'file'], prefixes: [] }, max_contaminated_fraction: 0.1, file_roots: [root] } });
      return seed;
    }

    it('dedups and decontaminates a file:// ref, writes the output under the run`s prefix, and records DataPrepared', async () => {
      const dir = mkdtempSync(join(root, 'ok-'));
      const data = dataDirectory(dir);
      const seed = await seeded();
      await p.startNodes(seed, () => new SimulatedExecutor({ timeScale: 100_000, progressIntervalMs: 50 }));
      const runId = await submitRun(p.api, seed, manifestWith(dir, data, planted('leak') / truth.length));
      await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed']);
      const events = await runEvents(p.api, seed, runId);
      expect(events.at(-1)!.type).toBe('RunSucceeded');
      const prepared = events.filter((e) => e.type === 'DataPrepared');
      expect(prepared).toHaveLength(1);
      const d = prepared[0]!.data;
      expect(d).toMatchObject({
        index: 0,
        ref: data.ref,
        input_sha256: data.sha256,
        shards: 2,
        docs_in: truth.length,
        docs_out: planted('clean') + planted('similar') + planted('near_miss'),
        removed: { exact: planted('exact'), near: planted('near'), decontamination: planted('leak') },
        contaminated_items: leakedItems,
        contaminated_items_total: leakedItems.length,
        battery: { name: 'ito-evals/v1', items: 320, sha256: sha256(readFileSync(fileURLToPath(new URL('../../../test/fixtures/evals/ito-evals/v1.jsonl', import.meta.url)))) },
        method: { decontamination: '13-gram-overlap', order: 'exact, decontamination, near', params: { near: { bands: 20, rows: 5, permutations: 100, shingle_words: 5, jaccard_threshold: 0.8 } } },
      });
      // The output is under <checkpoint storage>/<run id>/data/0/, shard by shard, and hashes to output_sha256.
      expect(d.output_ref).toBe(`file://${dir}/ckpt/${runId}/data/0/`);
      const outDir = fileURLToPath(d.output_ref);
      const tree = createHash('sha256');
      let keptLines = 0;
      for (const f of ['part-0.jsonl', 'part-1.jsonl']) {
        const bytes = readFileSync(join(outDir, f));
        keptLines += bytes.toString('utf8').split('\n').filter(Boolean).length;
        tree.update(`${f}\u0000${sha256(bytes)}\n`);
      }
      expect(tree.digest('hex')).toBe(d.output_sha256);
      expect(keptLines).toBe(d.docs_out);
      expect(existsSync(join(outDir, 'decontamination.json'))).toBe(false);
      const report = JSON.parse(readFileSync(fileURLToPath(d.report_ref), 'utf8'));
      expect(report.removals).toHaveLength(truth.length - d.docs_out);
      // Data prep ran before planning, and the run's metrics and log show it.
      const order = events.map((e) => (e.type === 'StageStarted' ? `+${e.data.stage}` : e.type)).filter((t) => ['+data_prep', 'DataPrepared', '+planning'].includes(t));
      expect(order).toEqual(['+data_prep', 'DataPrepared', '+planning']);
      const metrics = (await p.api.call('GET', `/v1/runs/${runId}/metrics`, { key: seed.requester })).body.data;
      expect(metrics.data_prepared).toEqual([d]);
      const logs = (await p.api.call('GET', `/v1/runs/${runId}/logs`, { key: seed.requester })).body.data.lines.map((l: { line?: string; message?: string }) => JSON.stringify(l));
      expect(logs.join('\n')).toContain(`${truth.length} documents in, ${d.docs_out} out`);
    });

    it('a declared contaminated fraction the stage does not reproduce fails the run data_policy_violation before any training stage', async () => {
      const dir = mkdtempSync(join(root, 'lie-'));
      const data = dataDirectory(dir);
      const seed = await seeded();
      const runId = await submitRun(p.api, seed, manifestWith(dir, data, 0));
      await waitForState(p.api, seed, runId, ['failed', 'succeeded']);
      const events = await runEvents(p.api, seed, runId);
      expect(events.filter((e) => e.type === 'StageStarted').map((e) => e.data.stage)).toEqual(['data_prep']);
      expect(events.filter((e) => e.type === 'DataPrepared')).toHaveLength(1);
      const failed = events.at(-1)!;
      expect(failed).toMatchObject({ type: 'RunFailed', data: { code: 'data_policy_violation' } });
      expect(failed.data.reason).toBe(`$.data[0].decontamination declares a contaminated fraction of 0, but ${planted('leak')} of ${truth.length} documents (${planted('leak') / truth.length}) overlap the battery`);
      const tasks = await p.api.pool.query('select count(*)::int as n from tasks where run_id = $1', [runId]);
      expect(tasks.rows[0].n).toBe(0);
    });
  });
}

describe('data prep refusals that need no queue', () => {
  it('a data ref whose battery items are not on the worker is refused, never passed', async () => {
    const { checkDataRefs } = await import('../src/stages/data-prep.js');
    const { defaultStorageRegistry } = await import('@ito/storage');
    const root = mkdtempSync(join(tmpdir(), 'ito-dataprep-nobattery-'));
    try {
      const data = dataDirectory(root);
      const manifest = JSON.parse(manifestWith(root, data, 0));
      const outcome = await checkDataRefs('run_x', manifest, { evalBatteryDir: join(root, 'no-evals'), storage: defaultStorageRegistry(), fileRoots: [root] });
      expect(outcome).toMatchObject({ ok: false, reason: expect.stringContaining('the items of eval battery ito-evals/v1 are not on this worker') });
      expect(existsSync(join(root, 'ckpt'))).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
