import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedExecutor } from '@ito/agent';
import { manifestDigest } from '@ito/contracts';
import { defaultStorageRegistry } from '@ito/storage';
import { storageCheckpointRemover } from '@ito/worker';
import { smallManifest } from '../../../test/support/manifests.js';
import { runEvents, seedTenant, startPipeline, submitRun, waitForState, type Pipeline } from '../../../test/support/pipeline.js';

/**
 * Issue 24 §1 and §2 at the worker: a data ref swapped for a symlink after the confirmation checked it is
 * refused before it is opened, and prune and cleanup never delete through a symlinked directory in the run's
 * prefix; CheckpointDeleted says what was really removed.
 */
const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');
const SECRET = '{"text":"another tenant\'s document, which the attacker knows the digest of"}\n';

let p: Pipeline;
let base: string;
let grant: string;
let victim: string;
beforeAll(async () => {
  p = await startPipeline('postgres');
  base = mkdtempSync(join(tmpdir(), 'ito-confine-'));
  grant = join(base, 'grant');
  victim = join(base, 'victim');
  mkdirSync(grant);
  mkdirSync(victim);
});
afterAll(async () => {
  await p?.close();
  rmSync(base, { recursive: true, force: true });
});

async function seeded() {
  const seed = await seedTenant(p.api);
  await p.api.admin.setTenantPolicy({
    tenantId: seed.tenant.tenant_id,
    policy: { checkpoint_storage: { schemes: ['s3', 'file'], prefixes: [] }, file_roots: [grant], max_contaminated_fraction: 0.1 },
  });
  return seed;
}

describe('the worker keeps a tenant inside its file roots', () => {
  it('a data ref swapped for a symlink after the confirmation is refused at data prep: nothing read, nothing written, no digest', async () => {
    const seed = await seeded();
    const dataDir = join(grant, 'swap', 'data');
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, 'part.jsonl'), '{"text":"the tenant\'s own document"}\n');
    mkdirSync(join(victim, 'swap'), { recursive: true });
    writeFileSync(join(victim, 'swap', 'part.jsonl'), SECRET);
    // The manifest declares the victim's digest: today data prep would copy the victim's bytes into the run's prefix.
    const manifest = smallManifest((m) => {
      m.checkpoint.storage = `file://${grant}/swap/ckpt/`;
      m.data[0] = { ...m.data[0], ref: `file://${dataDir}/part.jsonl`, sha256: sha256(SECRET) };
    });
    const digest = manifestDigest(manifest);
    const c = await p.api.call('POST', '/v1/confirmations', { key: seed.requester, body: { action: 'train.create', booking_id: seed.bookingId, manifest, manifest_digest: digest } });
    expect(c.status, JSON.stringify(c.body)).toBe(201);
    await p.api.call('POST', `/v1/confirmations/${c.body.data.confirmation_ref}/approve`, { key: seed.approver });

    // After the check: the data directory becomes a symlink to the victim's.
    rmSync(dataDir, { recursive: true });
    symlinkSync(join(victim, 'swap'), dataDir);

    const r = await p.api.call('POST', '/v1/runs', {
      key: seed.requester,
      body: { booking_id: seed.bookingId, manifest, manifest_digest: digest, confirmation_ref: c.body.data.confirmation_ref },
      headers: { 'idempotency-key': 'swap-1' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const runId = r.body.data.run_id as string;
    await waitForState(p.api, seed, runId, ['failed', 'succeeded']);
    const events = await runEvents(p.api, seed, runId);
    const failed = events.at(-1)!;
    expect(failed).toMatchObject({ type: 'RunFailed', data: { code: 'data_ref_not_permitted' } });
    expect(events.filter((e) => ['DataRefChecked', 'DataPrepared'].includes(e.type))).toEqual([]);
    const everything = JSON.stringify(events);
    expect(everything).not.toMatch(/hashes to [0-9a-f]{64}/);
    expect(failed.data.reason).not.toMatch(/[0-9a-f]{64}/);
    expect(failed.data.reason).not.toContain(victim);
    // Nothing was written under the run's prefix, and the victim's file is as it was.
    expect(existsSync(join(grant, 'swap', 'ckpt', runId))).toBe(false);
    expect(readFileSync(join(victim, 'swap', 'part.jsonl'), 'utf8')).toBe(SECRET);
  });

  it('a data ref whose digest does not match is refused without naming the digest found', async () => {
    const seed = await seeded();
    const dir = join(grant, 'mismatch');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'part.jsonl'), SECRET);
    const runId = await submitRun(
      p.api,
      seed,
      smallManifest((m) => {
        m.checkpoint.storage = `file://${dir}/ckpt/`;
        m.data[0] = { ...m.data[0], ref: `file://${dir}/part.jsonl`, sha256: 'a'.repeat(64) };
      }),
    );
    await waitForState(p.api, seed, runId, ['failed', 'succeeded']);
    const failed = (await runEvents(p.api, seed, runId)).at(-1)!;
    expect(failed).toMatchObject({ type: 'RunFailed', data: { code: 'data_policy_violation', reason: '$.data[0].ref does not hash to its declared sha256' } });
    expect(JSON.stringify(await runEvents(p.api, seed, runId))).not.toContain(sha256(SECRET));
  });

  it('prune: a checkpoint under a symlinked stage directory is refused, never deleted in the victim', async () => {
    const target = join(victim, 'prune');
    mkdirSync(target, { recursive: true });
    writeFileSync(join(target, 'step-100'), 'victim bytes');
    const runDir = join(grant, 'prune', 'ckpt', 'run_x');
    mkdirSync(runDir, { recursive: true });
    symlinkSync(target, join(runDir, 'pretrain'));
    const removed = await storageCheckpointRemover(defaultStorageRegistry()).remove({ uri: `file://${runDir}/pretrain/step-100` });
    expect(removed).toEqual({ existed: false, refused: 'not_an_object' });
    expect(readdirSync(target)).toEqual(['step-100']);
  });

  it('cleanup after `ln -s /victim <storage>/<run>/pretrain` leaves the victim intact and records nothing as removed', async () => {
    const seed = await seeded();
    const storage = join(grant, 'cleanup', 'ckpt');
    await p.startNodes(seed, () => new SimulatedExecutor({ timeScale: 50_000, progressIntervalMs: 20 }));
    const runId = await submitRun(p.api, seed, smallManifest((m) => (m.checkpoint.storage = `file://${storage}/`)));
    await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed']);
    const kept = (await p.api.call('GET', `/v1/runs/${runId}/checkpoints`, { key: seed.requester })).body.data.checkpoints as Array<{ uri: string }>;
    expect(kept.length).toBeGreaterThan(0);
    const stageDir = join(storage, runId, 'pretrain');
    for (const c of kept) expect(fileURLToPath(c.uri).startsWith(`${stageDir}/`), c.uri).toBe(true);

    // The attacker moves the stage directory away and points its name at a victim holding files of the same names.
    const target = join(victim, `cleanup-${runId}`);
    renameSync(stageDir, target);
    symlinkSync(target, stageDir);
    const before = readdirSync(target).sort();
    expect(before.length).toBeGreaterThanOrEqual(kept.length);

    const cfm = await p.api.call('POST', '/v1/confirmations', { key: seed.requester, body: { action: 'run.cleanup', run_id: runId } });
    await p.api.call('POST', `/v1/confirmations/${cfm.body.data.confirmation_ref}/approve`, { key: seed.approver });
    const cleanup = await p.api.call('POST', `/v1/runs/${runId}/cleanup`, {
      key: seed.requester,
      body: { confirmation_ref: cfm.body.data.confirmation_ref },
      headers: { 'idempotency-key': `cleanup-${runId}` },
    });
    expect(cleanup.body.data.state).toBe('cleaning_up');
    await waitForState(p.api, seed, runId, ['cleaned']);

    expect(readdirSync(target).sort()).toEqual(before);
    const events = await runEvents(p.api, seed, runId);
    const deleted = events.filter((e) => e.type === 'CheckpointDeleted' && e.data.reason === 'cleanup');
    expect(deleted).toHaveLength(kept.length);
    for (const e of deleted) expect(e.data).toMatchObject({ existed: false, refused: 'not_an_object' });
    expect(events.at(-1)!).toMatchObject({ type: 'CleanupCompleted', data: { removed: [], missing: [], refused: kept.map((c) => c.uri) } });
  });

  it('cleanup after `ln -s /victim <storage>/<run>` sweeps nothing through the link, completes, and records every checkpoint refused', async () => {
    const seed = await seeded();
    const storage = join(grant, 'cleanup-prefix', 'ckpt');
    await p.startNodes(seed, () => new SimulatedExecutor({ timeScale: 50_000, progressIntervalMs: 20 }));
    const runId = await submitRun(p.api, seed, smallManifest((m) => (m.checkpoint.storage = `file://${storage}/`)));
    await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed']);
    const kept = (await p.api.call('GET', `/v1/runs/${runId}/checkpoints`, { key: seed.requester })).body.data.checkpoints as Array<{ uri: string }>;
    expect(kept.length).toBeGreaterThan(0);

    // The whole run prefix (checkpoints and anything else the run wrote) now points at a victim's directory.
    const runDir = join(storage, runId);
    const target = join(victim, `prefix-${runId}`);
    renameSync(runDir, target);
    symlinkSync(target, runDir);
    const listing = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listing(join(dir, e.name)).map((n) => `${e.name}/${n}`) : [e.name]));
    const before = listing(target).sort();
    expect(before.length).toBeGreaterThanOrEqual(kept.length);

    const cfm = await p.api.call('POST', '/v1/confirmations', { key: seed.requester, body: { action: 'run.cleanup', run_id: runId } });
    await p.api.call('POST', `/v1/confirmations/${cfm.body.data.confirmation_ref}/approve`, { key: seed.approver });
    await p.api.call('POST', `/v1/runs/${runId}/cleanup`, {
      key: seed.requester,
      body: { confirmation_ref: cfm.body.data.confirmation_ref },
      headers: { 'idempotency-key': `cleanup-${runId}` },
    });
    await waitForState(p.api, seed, runId, ['cleaned']);

    expect(listing(target).sort()).toEqual(before);
    const events = await runEvents(p.api, seed, runId);
    const completed = events.at(-1)!;
    expect(completed).toMatchObject({ type: 'CleanupCompleted', data: { removed: [], missing: [], refused: kept.map((c) => c.uri) } });
    // Nothing was swept under a prefix the driver would not go through, so no sweep is recorded.
    expect(completed.data).not.toHaveProperty('storage');
  });
});

describe('data prep writes only under the run`s prefix', () => {
  it('a checkpoint storage swapped for a symlinked directory after the confirmation is refused; nothing is written through it', async () => {
    const { checkDataRefs } = await import('../src/stages/data-prep.js');
    const dir = join(grant, 'prefix-swap');
    const storage = join(dir, 'ckpt');
    mkdirSync(storage, { recursive: true });
    const doc = '{"text":"a document the tenant owns, long enough to be a document of its own"}\n';
    writeFileSync(join(dir, 'part.jsonl'), doc);
    const manifest = JSON.parse(
      smallManifest((m) => {
        m.checkpoint.storage = `file://${storage}/`;
        m.data[0] = { ...m.data[0], ref: `file://${dir}/part.jsonl`, sha256: sha256(doc) };
      }),
    );
    const elsewhere = join(victim, 'prefix-swap');
    mkdirSync(elsewhere, { recursive: true });
    rmSync(storage, { recursive: true });
    symlinkSync(elsewhere, storage);
    const outcome = await checkDataRefs('run_swap', manifest, {
      evalBatteryDir: fileURLToPath(new URL('../../../test/fixtures/evals', import.meta.url)),
      storage: defaultStorageRegistry(),
      fileRoots: [grant],
    });
    expect(outcome).toMatchObject({ ok: false, code: 'checkpoint_storage_invalid' });
    expect(readdirSync(elsewhere)).toEqual([]);
  });
});
