import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getRun } from '@ito/runs';
import { FileStorageDriver, S3StorageDriver, StorageRegistry, configuredStorageRegistry, defaultStorageRegistry } from '@ito/storage';
import { pipelineHandlers, storageCheckpointRemover, type PipelineResources } from '@ito/worker';
import { usePool } from '../../../packages/ledger/test/harness.js';
import { startS3Server, type TestS3Server } from '../../../test/support/s3-server.js';
import { TENANT, barrier, removerWith, runStore, writeFile, type Checkpoint, type HandRun } from './support/hand-written-run.js';

/**
 * The worker's two storage jobs, `checkpoint.prune` and `run.cleanup`, driven by hand on runs written through the
 * run writer: what each removes from storage, what it records (CheckpointDeleted, CleanupCompleted's removed,
 * missing and refused lists and its sweep of the run's prefix), and what it answers. Refused paths (outside the
 * worker's roots, a symlink at a component, a URI the driver will not read) remove nothing and leave nothing.
 */
const db = usePool(6);
let store: ReturnType<typeof runStore>;
let base: string;
let grant: string;
let victim: string;
beforeAll(() => {
  store = runStore(db.pool());
  base = mkdtempSync(join(tmpdir(), 'ito-storage-jobs-'));
  grant = join(base, 'grant');
  victim = join(base, 'victim');
  mkdirSync(grant);
  mkdirSync(victim);
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** The job handlers as the queue calls them, on the first attempt. */
const ctx = () => ({ jobId: 'test', attempt: 1, signal: new AbortController().signal });
const prune = (res: PipelineResources, run: HandRun, c: Checkpoint) =>
  pipelineHandlers(res)['checkpoint.prune']({ tenant_id: TENANT, run_id: run.runId, checkpoint_id: c.checkpoint_id }, ctx());
const cleanup = (res: PipelineResources, run: HandRun) => pipelineHandlers(res)['run.cleanup']({ tenant_id: TENANT, run_id: run.runId }, ctx());

/** Every file under `dir`, as paths relative to it, sorted (symlinks listed as themselves, not followed). */
function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)).map((n) => `${e.name}/${n}`) : [e.name]))
    .sort();
}

const storageOf = (name: string) => `file://${join(grant, name)}/`;
const pathOf = (run: HandRun) => fileURLToPath(run.prefix);
const rooted = () => new StorageRegistry([new FileStorageDriver({ roots: [grant] })]);
const keptIds = async (run: HandRun) => (await getRun(db.pool(), TENANT, run.runId))!.aggregate.checkpoints.map((c) => c.checkpoint_id);

describe('checkpoint.prune', () => {
  it('removes a checkpoint beyond keep_last, records it as the storage worker, answers `pruned <id>`; the newest keep_last stay', async () => {
    const run = await store.newRun(storageOf('prune'), { keepLast: 2 });
    const [c1, c2, c3, c4] = await store.saveCheckpoints(run, [
      { name: 'pretrain/step-100', bytes: 'one' },
      { name: 'pretrain/step-200', bytes: 'two' },
      { name: 'pretrain/step-300', bytes: 'three' },
      { name: 'pretrain/step-400', bytes: 'four' },
    ]);
    const res = store.resources();
    const v = await store.versionOf(run);
    expect(await prune(res, run, c1!)).toBe(`pruned ${c1!.checkpoint_id}`);
    expect(await store.eventsOf(run, v + 1)).toEqual([
      {
        type: 'CheckpointDeleted',
        data: { run_id: run.runId, checkpoint_id: c1!.checkpoint_id, uri: c1!.uri, reason: 'keep_last', existed: true },
        actor: 'worker:storage',
      },
    ]);
    expect(files(pathOf(run))).toEqual(['pretrain/step-200', 'pretrain/step-300', 'pretrain/step-400']);

    // The same job again, and a job for a checkpoint keep_last keeps: not needed, nothing removed or recorded.
    expect(await prune(res, run, c1!)).toBe('not needed');
    expect(await prune(res, run, c3!)).toBe('not needed');
    expect(await store.versionOf(run)).toBe(v + 1);
    expect(files(pathOf(run))).toEqual(['pretrain/step-200', 'pretrain/step-300', 'pretrain/step-400']);

    expect(await prune(res, run, c2!)).toBe(`pruned ${c2!.checkpoint_id}`);
    expect(files(pathOf(run))).toEqual(['pretrain/step-300', 'pretrain/step-400']);
    expect(await keptIds(run)).toEqual([c3!.checkpoint_id, c4!.checkpoint_id]);
  });

  it('records a checkpoint already gone as not existed, and a simulated one without touching storage', async () => {
    const run = await store.newRun(storageOf('prune-gone'), { keepLast: 1 });
    // The simulated executor never wrote step-100; a file of that name is someone else's and stays.
    const [simulated, gone, real, kept] = await store.saveCheckpoints(run, [
      { name: 'pretrain/step-100', simulated: true },
      { name: 'pretrain/step-200' },
      { name: 'pretrain/step-300', bytes: 'real' },
      { name: 'pretrain/step-400', bytes: 'kept' },
    ]);
    writeFile(simulated!.uri, 'not the run`s');
    const res = store.resources();
    const v = await store.versionOf(run);
    // A real checkpoint after a simulated one is removed: each is pruned by what it was.
    expect(await prune(res, run, real!)).toBe(`pruned ${real!.checkpoint_id}`);
    expect(await prune(res, run, simulated!)).toBe(`pruned ${simulated!.checkpoint_id}`);
    expect(await prune(res, run, gone!)).toBe(`pruned ${gone!.checkpoint_id}`);
    expect((await store.eventsOf(run, v + 1)).map((e) => e.data)).toEqual([
      { run_id: run.runId, checkpoint_id: real!.checkpoint_id, uri: real!.uri, reason: 'keep_last', existed: true },
      { run_id: run.runId, checkpoint_id: simulated!.checkpoint_id, uri: simulated!.uri, reason: 'keep_last', existed: false },
      { run_id: run.runId, checkpoint_id: gone!.checkpoint_id, uri: gone!.uri, reason: 'keep_last', existed: false },
    ]);
    expect(files(pathOf(run))).toEqual(['pretrain/step-100', 'pretrain/step-400']);
    expect(readFileSync(fileURLToPath(simulated!.uri), 'utf8')).toBe('not the run`s');
    expect(await keptIds(run)).toEqual([kept!.checkpoint_id]);
  });

  it('refuses a checkpoint under a symlinked stage directory: recorded refused, the victim`s file stays', async () => {
    const run = await store.newRun(storageOf('prune-link'), { keepLast: 1 });
    const target = join(victim, 'prune-link');
    mkdirSync(target, { recursive: true });
    mkdirSync(pathOf(run), { recursive: true });
    symlinkSync(target, join(pathOf(run), 'pretrain'));
    const [linked] = await store.saveCheckpoints(run, [{ name: 'pretrain/step-100' }, { name: 'eval/step-200', bytes: 'kept' }]);
    writeFile(`file://${target}/step-100`, 'victim bytes');
    const v = await store.versionOf(run);
    expect(await prune(store.resources(), run, linked!)).toBe(`pruned ${linked!.checkpoint_id}`);
    expect((await store.eventsOf(run, v + 1)).map((e) => e.data)).toEqual([
      { run_id: run.runId, checkpoint_id: linked!.checkpoint_id, uri: linked!.uri, reason: 'keep_last', existed: false, refused: 'not_an_object' },
    ]);
    expect(files(target)).toEqual(['step-100']);
  });

  it('refuses a checkpoint outside the worker`s roots: recorded refused, the file stays', async () => {
    const run = await store.newRun(`file://${join(base, 'outside', 'prune')}/`, { keepLast: 1 });
    const [outside] = await store.saveCheckpoints(run, [
      { name: 'pretrain/step-100', bytes: 'outside' },
      { name: 'pretrain/step-200', bytes: 'kept' },
    ]);
    const v = await store.versionOf(run);
    expect(await prune(store.resources({ storage: rooted() }), run, outside!)).toBe(`pruned ${outside!.checkpoint_id}`);
    expect((await store.eventsOf(run, v + 1)).map((e) => e.data)).toEqual([
      { run_id: run.runId, checkpoint_id: outside!.checkpoint_id, uri: outside!.uri, reason: 'keep_last', existed: false, refused: 'outside_root' },
    ]);
    expect(files(pathOf(run))).toEqual(['pretrain/step-100', 'pretrain/step-200']);
  });

  it('two workers pruning the same checkpoint at once record it once; the second answers not needed', async () => {
    const run = await store.newRun(storageOf('prune-twice'), { keepLast: 1 });
    const [old] = await store.saveCheckpoints(run, [
      { name: 'pretrain/step-100', bytes: 'old' },
      { name: 'pretrain/step-200', bytes: 'kept' },
    ]);
    // Both jobs have read the run and are removing the file before either records the deletion.
    const res = store.resources({ checkpoints: removerWith(storageCheckpointRemover(defaultStorageRegistry()), barrier(2)) });
    const v = await store.versionOf(run);
    const answers = await Promise.all([prune(res, run, old!), prune(res, run, old!)]);
    expect(answers.sort()).toEqual(['not needed', `pruned ${old!.checkpoint_id}`]);
    const events = await store.eventsOf(run, v + 1);
    expect(events.map((e) => [e.type, e.data.checkpoint_id])).toEqual([['CheckpointDeleted', old!.checkpoint_id]]);
    expect(files(pathOf(run))).toEqual(['pretrain/step-200']);
  });
});

/** The events cleanup appended: each checkpoint's CheckpointDeleted, then CleanupCompleted's data. */
async function cleanupRecord(run: HandRun, from: number): Promise<{ deleted: unknown[]; completed: any; actors: Array<string | undefined> }> {
  const events = await store.eventsOf(run, from);
  expect(events.map((e) => e.type)).toEqual([...events.slice(0, -1).map(() => 'CheckpointDeleted'), 'CleanupCompleted']);
  return { deleted: events.slice(0, -1).map((e) => e.data), completed: events.at(-1)!.data, actors: [...new Set(events.map((e) => e.actor))] };
}

const deleted = (run: HandRun, c: Checkpoint, existed: boolean, refused?: string) => ({
  run_id: run.runId,
  checkpoint_id: c.checkpoint_id,
  uri: c.uri,
  reason: 'cleanup',
  existed,
  ...(refused ? { refused } : {}),
});

describe('run.cleanup', () => {
  it('removes every checkpoint, sweeps the rest of the run`s prefix, records removed, missing and the sweep, answers `removed <n> checkpoint(s)`', async () => {
    const run = await store.newRun(storageOf('cleanup'), { keepLast: 5 });
    const [c1, c2, c3, c4] = await store.saveCheckpoints(run, [
      { name: 'pretrain/step-100', bytes: 'eleven byte' },
      { name: 'pretrain/step-200' },
      { name: 'pretrain/step-300', simulated: true },
      { name: 'eval/step-400', bytes: 'fives' },
    ]);
    writeFile(`${run.prefix}data/0/corpus.jsonl`, 'corpus!');
    writeFile(`${run.prefix}reports/eval.json`, '{}\n');
    // A neighbour whose name starts with the run's id is not under the run's prefix.
    const neighbour = join(grant, 'cleanup', `${run.runId}x`, 'keep');
    writeFile(`file://${neighbour}`, 'not this run');
    await store.startCleanup(run);
    const v = await store.versionOf(run);
    const res = store.resources();

    expect(await cleanup(res, run)).toBe('removed 2 checkpoint(s)');
    const record = await cleanupRecord(run, v + 1);
    expect(record.deleted).toEqual([deleted(run, c1!, true), deleted(run, c2!, false), deleted(run, c3!, false), deleted(run, c4!, true)]);
    expect(record.completed).toEqual({
      run_id: run.runId,
      removed: [c1!.uri, c4!.uri],
      missing: [c2!.uri, c3!.uri],
      booking_released: false,
      storage: { prefix: run.prefix, objects: 4, bytes: 11 + 5 + 7 + 3 },
    });
    expect(record.actors).toEqual(['worker:storage']);
    expect(files(pathOf(run))).toEqual([]);
    expect(readFileSync(neighbour, 'utf8')).toBe('not this run');
    expect(await keptIds(run)).toEqual([]);
    expect((await getRun(db.pool(), TENANT, run.runId))!.state).toBe('cleaned');

    // Done once: the job again finds nothing to do and records nothing.
    expect(await cleanup(res, run)).toBe('not needed');
    expect(await store.versionOf(run)).toBe(v + 5);
  });

  it('is not needed for a run whose cleanup was not started: nothing removed, nothing recorded', async () => {
    const run = await store.newRun(storageOf('cleanup-early'));
    await store.saveCheckpoints(run, [{ name: 'pretrain/step-100', bytes: 'running' }]);
    writeFile(`${run.prefix}data/0/corpus.jsonl`, 'corpus!');
    const v = await store.versionOf(run);
    expect(await cleanup(store.resources(), run)).toBe('not needed');
    expect(await store.versionOf(run)).toBe(v);
    expect(files(pathOf(run))).toEqual(['data/0/corpus.jsonl', 'pretrain/step-100']);
  });

  it('records the booking released when the cleanup releases it; without the run`s manifest nothing else is swept', async () => {
    const run = await store.newRun(storageOf('cleanup-release'), { saveManifestBody: false });
    const [c1] = await store.saveCheckpoints(run, [{ name: 'pretrain/step-100', bytes: 'one' }]);
    writeFile(`${run.prefix}data/0/corpus.jsonl`, 'corpus!');
    await store.startCleanup(run, true);
    const v = await store.versionOf(run);
    expect(await cleanup(store.resources(), run)).toBe('removed 1 checkpoint(s)');
    const record = await cleanupRecord(run, v + 1);
    expect(record.completed).toEqual({ run_id: run.runId, removed: [c1!.uri], missing: [], booking_released: true });
    expect(files(pathOf(run))).toEqual(['data/0/corpus.jsonl']);
  });

  it('on a scheme this worker has no driver for, records modelled checkpoints missing and sweeps nothing', async () => {
    const run = await store.newRun('s3://ito-runs/ckpt/');
    const [c1, c2] = await store.saveCheckpoints(run, [
      { name: 'pretrain/step-100', simulated: true },
      { name: 'pretrain/step-200', simulated: true },
    ]);
    await store.startCleanup(run);
    const v = await store.versionOf(run);
    expect(await cleanup(store.resources(), run)).toBe('removed 0 checkpoint(s)');
    const record = await cleanupRecord(run, v + 1);
    expect(record.deleted).toEqual([deleted(run, c1!, false), deleted(run, c2!, false)]);
    expect(record.completed).toEqual({ run_id: run.runId, removed: [], missing: [c1!.uri, c2!.uri], booking_released: false });
  });

  it('counts in the sweep only what was under the run`s prefix: a checkpoint recorded elsewhere is removed, not totalled', async () => {
    const run = await store.newRun(storageOf('cleanup-elsewhere'));
    const [inside, elsewhere] = await store.saveCheckpoints(run, [
      { name: 'pretrain/step-100', bytes: 'inside' },
      { name: `file://${join(grant, 'cleanup-elsewhere', 'older', 'step-200')}`, bytes: 'elsewhere' },
    ]);
    await store.startCleanup(run);
    const v = await store.versionOf(run);
    expect(await cleanup(store.resources(), run)).toBe('removed 2 checkpoint(s)');
    expect((await cleanupRecord(run, v + 1)).completed).toEqual({
      run_id: run.runId,
      removed: [inside!.uri, elsewhere!.uri],
      missing: [],
      booking_released: false,
      storage: { prefix: run.prefix, objects: 1, bytes: 6 },
    });
    expect(files(join(grant, 'cleanup-elsewhere'))).toEqual([]);
  });

  it('a checkpoint someone else removed after the listing is missing, and not counted in the sweep', async () => {
    const run = await store.newRun(storageOf('cleanup-raced'));
    const [c1, c2] = await store.saveCheckpoints(run, [
      { name: 'pretrain/step-100', bytes: 'raced' },
      { name: 'pretrain/step-200', bytes: 'mine' },
    ]);
    await store.startCleanup(run);
    // A prune job that was already running removes step-100 between cleanup's listing and its own removal.
    const raced = removerWith(storageCheckpointRemover(defaultStorageRegistry()), (uri) => (uri === c1!.uri ? void rmSync(fileURLToPath(uri)) : undefined));
    const v = await store.versionOf(run);
    expect(await cleanup(store.resources({ checkpoints: raced }), run)).toBe('removed 1 checkpoint(s)');
    expect((await cleanupRecord(run, v + 1)).completed).toEqual({
      run_id: run.runId,
      removed: [c2!.uri],
      missing: [c1!.uri],
      booking_released: false,
      storage: { prefix: run.prefix, objects: 1, bytes: 4 },
    });
  });

  it('a listing the driver will not finish (too many entries) fails the job before anything is removed or recorded', async () => {
    const run = await store.newRun(storageOf('cleanup-bound'));
    await store.saveCheckpoints(run, [
      { name: 'pretrain/step-100', bytes: 'one' },
      { name: 'pretrain/step-200', bytes: 'two' },
      { name: 'pretrain/step-300', bytes: 'three' },
    ]);
    await store.startCleanup(run);
    const v = await store.versionOf(run);
    const bounded = new StorageRegistry([new FileStorageDriver({ maxListEntries: 3 })]);
    await expect(cleanup(store.resources({ storage: bounded }), run)).rejects.toMatchObject({ reason: 'too_many_objects' });
    expect(await store.versionOf(run)).toBe(v);
    expect(files(pathOf(run))).toEqual(['pretrain/step-100', 'pretrain/step-200', 'pretrain/step-300']);
  });

  it('a prefix grown past the listing bound during cleanup fails the job at the sweep; nothing is recorded, the retry finds the rest', async () => {
    const run = await store.newRun(storageOf('cleanup-grown'));
    const [c1] = await store.saveCheckpoints(run, [{ name: 'pretrain/step-100', bytes: 'one' }]);
    await store.startCleanup(run);
    const bounded = new StorageRegistry([new FileStorageDriver({ maxListEntries: 4 })]);
    const grow = removerWith(storageCheckpointRemover(bounded), () => {
      for (let i = 0; i < 5; i++) writeFile(`${run.prefix}reports/late-${i}.json`, '{}');
    });
    const v = await store.versionOf(run);
    await expect(cleanup(store.resources({ storage: bounded, checkpoints: grow }), run)).rejects.toMatchObject({ reason: 'too_many_objects' });
    expect(await store.versionOf(run)).toBe(v);
    expect(files(pathOf(run))).toEqual(['reports/late-0.json', 'reports/late-1.json', 'reports/late-2.json', 'reports/late-3.json', 'reports/late-4.json']);
    // The retry (with a listing bound that holds them) records the checkpoint missing and sweeps the rest.
    expect(await cleanup(store.resources(), run)).toBe('removed 0 checkpoint(s)');
    expect((await cleanupRecord(run, v + 1)).completed).toEqual({
      run_id: run.runId,
      removed: [],
      missing: [c1!.uri],
      booking_released: false,
      storage: { prefix: run.prefix, objects: 5, bytes: 10 },
    });
    expect(files(pathOf(run))).toEqual([]);
  });

  it('two workers cleaning up at once complete it once; the second answers not needed', async () => {
    const run = await store.newRun(storageOf('cleanup-twice'));
    await store.saveCheckpoints(run, [
      { name: 'pretrain/step-100', bytes: 'one' },
      { name: 'pretrain/step-200', bytes: 'two' },
    ]);
    await store.startCleanup(run);
    const res = store.resources({ checkpoints: removerWith(storageCheckpointRemover(defaultStorageRegistry()), barrier(2)) });
    const v = await store.versionOf(run);
    const answers = (await Promise.all([cleanup(res, run), cleanup(res, run)])).sort();
    expect(answers[0]).toBe('not needed');
    expect(answers[1]).toMatch(/^removed [0-2] checkpoint\(s\)$/);
    expect((await store.eventsOf(run, v + 1)).map((e) => e.type)).toEqual(['CheckpointDeleted', 'CheckpointDeleted', 'CleanupCompleted']);
    expect(files(pathOf(run))).toEqual([]);
  });
});

describe('run.cleanup refuses, removes nothing through and leaves nothing behind', () => {
  it('a symlinked stage directory: its checkpoints recorded refused, the victim intact, the rest of the prefix swept', async () => {
    const run = await store.newRun(storageOf('refuse-stage'));
    const target = join(victim, 'refuse-stage');
    writeFile(`file://${target}/step-100`, 'victim one');
    writeFile(`file://${target}/step-200`, 'victim two');
    mkdirSync(pathOf(run), { recursive: true });
    symlinkSync(target, join(pathOf(run), 'pretrain'));
    writeFile(`${run.prefix}data/0/corpus.jsonl`, 'corpus!');
    const [c1, c2] = await store.saveCheckpoints(run, [{ name: 'pretrain/step-100' }, { name: 'pretrain/step-200' }]);
    await store.startCleanup(run);
    const v = await store.versionOf(run);
    expect(await cleanup(store.resources(), run)).toBe('removed 0 checkpoint(s)');
    const record = await cleanupRecord(run, v + 1);
    expect(record.deleted).toEqual([deleted(run, c1!, false, 'not_an_object'), deleted(run, c2!, false, 'not_an_object')]);
    expect(record.completed).toEqual({
      run_id: run.runId,
      removed: [],
      missing: [],
      refused: [c1!.uri, c2!.uri],
      booking_released: false,
      storage: { prefix: run.prefix, objects: 1, bytes: 7 },
    });
    expect(files(target)).toEqual(['step-100', 'step-200']);
    expect(readFileSync(join(target, 'step-100'), 'utf8')).toBe('victim one');
    expect(files(pathOf(run))).toEqual(['pretrain']);
  });

  it('a symlinked run prefix: every checkpoint refused, no sweep recorded, the victim intact', async () => {
    const run = await store.newRun(storageOf('refuse-prefix'));
    const target = join(victim, 'refuse-prefix');
    writeFile(`file://${target}/pretrain/step-100`, 'victim one');
    writeFile(`file://${target}/data/0/corpus.jsonl`, 'victim data');
    mkdirSync(join(grant, 'refuse-prefix'), { recursive: true });
    symlinkSync(target, pathOf(run).replace(/\/$/, ''));
    const [c1] = await store.saveCheckpoints(run, [{ name: 'pretrain/step-100' }]);
    await store.startCleanup(run);
    const v = await store.versionOf(run);
    expect(await cleanup(store.resources(), run)).toBe('removed 0 checkpoint(s)');
    const record = await cleanupRecord(run, v + 1);
    expect(record.deleted).toEqual([deleted(run, c1!, false, 'not_an_object')]);
    expect(record.completed).toEqual({ run_id: run.runId, removed: [], missing: [], refused: [c1!.uri], booking_released: false });
    expect(files(target)).toEqual(['data/0/corpus.jsonl', 'pretrain/step-100']);
  });

  it('a run prefix swapped for a symlink while cleanup runs: the sweep stops at the link and counts what was removed before', async () => {
    const run = await store.newRun(storageOf('refuse-swap'));
    const [c1, c2] = await store.saveCheckpoints(run, [{ name: 'pretrain/step-100', bytes: 'swap' }, { name: 'pretrain/step-200' }]);
    writeFile(`${run.prefix}data/0/corpus.jsonl`, 'corpus!');
    await store.startCleanup(run);
    // After the listing and the first removal, the attacker moves the prefix away and links its name to it.
    const target = join(victim, 'refuse-swap');
    const swap = removerWith(storageCheckpointRemover(defaultStorageRegistry()), (uri) => {
      if (uri !== c2!.uri) return;
      renameSync(pathOf(run), target);
      symlinkSync(target, pathOf(run).replace(/\/$/, ''));
    });
    const v = await store.versionOf(run);
    expect(await cleanup(store.resources({ checkpoints: swap }), run)).toBe('removed 1 checkpoint(s)');
    const record = await cleanupRecord(run, v + 1);
    expect(record.completed).toEqual({
      run_id: run.runId,
      removed: [c1!.uri],
      missing: [],
      refused: [c2!.uri],
      booking_released: false,
      storage: { prefix: run.prefix, objects: 1, bytes: 4 },
    });
    expect(files(target)).toEqual(['data/0/corpus.jsonl']);
  });

  it('a run prefix outside the worker`s roots: every checkpoint refused, nothing swept, every file stays', async () => {
    const outside = join(base, 'outside', 'cleanup');
    const run = await store.newRun(`file://${outside}/`);
    const [c1] = await store.saveCheckpoints(run, [{ name: 'pretrain/step-100', bytes: 'outside' }]);
    writeFile(`${run.prefix}data/0/corpus.jsonl`, 'corpus!');
    await store.startCleanup(run);
    const v = await store.versionOf(run);
    expect(await cleanup(store.resources({ storage: rooted() }), run)).toBe('removed 0 checkpoint(s)');
    const record = await cleanupRecord(run, v + 1);
    expect(record.deleted).toEqual([deleted(run, c1!, false, 'outside_root')]);
    expect(record.completed).toEqual({ run_id: run.runId, removed: [], missing: [], refused: [c1!.uri], booking_released: false });
    expect(files(pathOf(run))).toEqual(['data/0/corpus.jsonl', 'pretrain/step-100']);
  });

  it('a run prefix the file driver cannot name (a `%` in it): every checkpoint refused, nothing swept, every file stays', async () => {
    const dir = join(grant, 'odd%dir');
    const run = await store.newRun(`file://${dir}/`);
    const [c1] = await store.saveCheckpoints(run, [{ name: 'pretrain/step-100' }]);
    mkdirSync(join(dir, run.runId, 'pretrain'), { recursive: true });
    writeFileSync(join(dir, run.runId, 'pretrain', 'step-100'), 'odd');
    await store.startCleanup(run);
    const v = await store.versionOf(run);
    expect(await cleanup(store.resources(), run)).toBe('removed 0 checkpoint(s)');
    const record = await cleanupRecord(run, v + 1);
    expect(record.deleted).toEqual([deleted(run, c1!, false, 'invalid_uri')]);
    expect(record.completed).toEqual({ run_id: run.runId, removed: [], missing: [], refused: [c1!.uri], booking_released: false });
    expect(files(join(dir, run.runId))).toEqual(['pretrain/step-100']);
  });
});

describe('run.cleanup on s3://', () => {
  let s3: TestS3Server;
  let driver: S3StorageDriver;
  let storage: StorageRegistry;
  beforeAll(async () => {
    s3 = await startS3Server(['ito-runs']);
    driver = new S3StorageDriver(s3.options());
    storage = configuredStorageRegistry({ s3: s3.options() });
  }, 30_000);
  afterAll(async () => {
    driver?.close();
    await s3?.stop();
  });

  it('removes the checkpoints and sweeps the prefix in the bucket, recording what it removed; a neighbour stays', async () => {
    const run = await store.newRun('s3://ito-runs/ckpt/');
    const [c1, c2] = await store.saveCheckpoints(run, [{ name: 'pretrain/step-100' }, { name: 'pretrain/step-200' }]);
    await driver.write(c1!.uri, Buffer.from('checkpoint'));
    await driver.write(`${run.prefix}data/0/corpus.jsonl`, Buffer.from('corpus!'));
    const neighbour = `s3://ito-runs/ckpt/${run.runId}x/keep`;
    await driver.write(neighbour, Buffer.from('not this run'));
    await store.startCleanup(run);
    const v = await store.versionOf(run);
    expect(await cleanup(store.resources({ storage }), run)).toBe('removed 1 checkpoint(s)');
    const record = await cleanupRecord(run, v + 1);
    expect(record.deleted).toEqual([deleted(run, c1!, true), deleted(run, c2!, false)]);
    expect(record.completed).toEqual({
      run_id: run.runId,
      removed: [c1!.uri],
      missing: [c2!.uri],
      booking_released: false,
      storage: { prefix: run.prefix, objects: 2, bytes: 10 + 7 },
    });
    expect(await driver.list(run.prefix)).toEqual([]);
    expect(await driver.list(`s3://ito-runs/ckpt/${run.runId}x/`)).toEqual([neighbour]);
  });

  it('a bucket that does not exist holds nothing to sweep: the cleanup completes with an empty sweep', async () => {
    const run = await store.newRun('s3://no-such-bucket/ckpt/');
    const [c1] = await store.saveCheckpoints(run, [{ name: 'pretrain/step-100', simulated: true }]);
    await store.startCleanup(run);
    const v = await store.versionOf(run);
    expect(await cleanup(store.resources({ storage }), run)).toBe('removed 0 checkpoint(s)');
    expect((await cleanupRecord(run, v + 1)).completed).toEqual({
      run_id: run.runId,
      removed: [],
      missing: [c1!.uri],
      booking_released: false,
      storage: { prefix: run.prefix, objects: 0, bytes: 0 },
    });
  });
});
