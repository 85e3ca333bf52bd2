import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestDigest } from '@ito/contracts';
import { runStreamId } from '@ito/domain';
import { EXAMPLE_MANIFEST, footprint, seedTenant, startApi, type Api, type Seed } from '../../../test/support/api.js';
import { runCli, type CliRun } from './support/cli.js';

/**
 * The whole requester/approver path through the BUILT `ito` against a real API on a fresh database: every
 * --json step is exactly one ok envelope with exit 0, and the database agrees with what the CLI reported.
 * The API runs no stage orchestrator, so the test appends the orchestrator's events to the run stream itself
 * (through the same ledger and inline projections), the way a worker would.
 */

let api: Api;
let seed: Seed;
let dir: string;
let manifestPath: string;
const DIGEST = manifestDigest(EXAMPLE_MANIFEST);

beforeAll(async () => {
  api = await startApi();
  seed = await seedTenant(api);
  dir = mkdtempSync(join(tmpdir(), 'ito-flow-'));
  manifestPath = join(dir, 'manifest.json');
  writeFileSync(manifestPath, EXAMPLE_MANIFEST);
  chmodSync(manifestPath, 0o644);
});

afterAll(async () => {
  await api?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The key travels only in the child's environment, never in argv. */
function ito(args: string[], key: string = seed.requester): Promise<CliRun> {
  return runCli(args, { env: { ITO_API_URL: api.url, ITO_API_KEY: key, ITO_HOME: join(dir, 'home') } });
}

/** Exactly one envelope on stdout, ok, exit 0; answers its data. */
async function okJson(args: string[], key?: string): Promise<any> {
  const res = await ito([...args, '--json'], key);
  expect(res.code, res.stderr).toBe(0);
  const lines = res.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  const out = JSON.parse(lines[0]!);
  expect(out).toMatchObject({ ok: true, live_api_contacted: true });
  expect(res.stdout + res.stderr).not.toContain(seed.requester);
  expect(res.stdout + res.stderr).not.toContain(seed.approver);
  return out;
}

async function confirmationStatus(ref: string): Promise<string> {
  const { rows } = await api.pool.query<{ status: string }>('select status from confirmations where ref = $1', [ref]);
  return rows[0]!.status;
}

async function runRow(runId: string) {
  const { rows } = await api.pool.query('select run_id, state, stage, idempotency_key, manifest_digest, booking_id, confirmation_ref from runs where run_id = $1', [runId]);
  return rows[0];
}

async function requestAndApprove(action: string, runId: string): Promise<string> {
  const requested = await okJson(['confirm', 'request', '--action', action, '--run', runId]);
  expect(requested.data).toMatchObject({ action, run_id: runId, booking_id: seed.bookingId, status: 'pending' });
  const ref = requested.data.confirmation_ref as string;
  const approved = await okJson(['confirm', 'approve', ref], seed.approver);
  expect(approved.data.status).toBe('approved');
  expect(await confirmationStatus(ref)).toBe('approved');
  return ref;
}

async function orchestrate(runId: string, events: { type: string; data: Record<string, unknown> }[]): Promise<void> {
  await api.ledger.append(
    runStreamId(runId),
    events.map((e) => ({ ...e, data: { run_id: runId, ...e.data }, metadata: { actor: 'test-orchestrator' } })),
    { tenantId: seed.tenant.tenant_id, expectedVersion: 'any' },
  );
}

describe('ito from plan to cleanup against the real API', () => {
  let trainRef: string;
  let runId: string;
  const KEY = 'flow-train-1';

  it('plan answers the planner result and creates nothing', async () => {
    const before = await footprint(api);
    const out = await okJson(['plan', '--booking', seed.bookingId, '--manifest', manifestPath]);
    expect(out.data).toMatchObject({ booking_id: seed.bookingId, manifest_digest: DIGEST });
    for (const field of ['tp', 'pp', 'dp', 'cp', 'precision', 'micro_batch', 'memory_per_gpu_gb', 'tokens_per_s', 'mfu_assumption', 'gpu_hours']) {
      expect(out.data.plan[field], field).toBeDefined();
    }
    expect(out.data.estimated_cost_usd).toBeGreaterThan(0);
    expect(await footprint(api)).toEqual(before);
    const { rows } = await api.pool.query('select count(*)::int as n from confirmations');
    expect(rows[0].n).toBe(0);
  });

  it('confirm request records a pending train.create confirmation bound to the digest; the approver approves it', async () => {
    const out = await okJson(['confirm', 'request', '--action', 'train.create', '--booking', seed.bookingId, '--manifest', manifestPath]);
    expect(out.data).toMatchObject({ action: 'train.create', status: 'pending', booking_id: seed.bookingId, manifest_digest: DIGEST });
    trainRef = out.data.confirmation_ref;
    const { rows } = await api.pool.query('select status, manifest_digest, booking_id from confirmations where ref = $1', [trainRef]);
    expect(rows).toEqual([{ status: 'pending', manifest_digest: DIGEST, booking_id: seed.bookingId }]);

    const approved = await okJson(['confirm', 'approve', trainRef], seed.approver);
    expect(approved.data).toMatchObject({ confirmation_ref: trainRef, status: 'approved' });
    expect(await confirmationStatus(trainRef)).toBe('approved');
  });

  it('train starts exactly one run with the key, consuming the confirmation', async () => {
    const out = await okJson(['train', '--booking', seed.bookingId, '--manifest', manifestPath, '--confirmation-ref', trainRef, '--idempotency-key', KEY]);
    // Accepted though no agent of the booking has dialled in: the notice says so rather than refusing.
    expect(out.notice).toMatch(/^no node of booking bkg_[0-9a-f]{32} is live \(0 of 2\)/);
    runId = out.data.run_id;
    expect(out.data).toMatchObject({ booking_id: seed.bookingId, manifest_digest: DIGEST, idempotency_key: KEY });
    expect(await runRow(runId)).toMatchObject({ state: out.data.state, idempotency_key: KEY, manifest_digest: DIGEST, confirmation_ref: trainRef });
    expect(await confirmationStatus(trainRef)).toBe('consumed');
  });

  it('the same train again with the same key replays: the notice says so and still one run exists', async () => {
    const out = await okJson(['train', '--booking', seed.bookingId, '--manifest', manifestPath, '--confirmation-ref', trainRef, '--idempotency-key', KEY]);
    expect(out.notice).toMatch(/replayed/);
    expect(out.data.run_id).toBe(runId);
    const { rows } = await api.pool.query('select run_id from runs');
    expect(rows).toEqual([{ run_id: runId }]);
  });

  it('train with an unapproved confirmation exits 1 with confirmation_pending and leaves no run', async () => {
    const pending = await okJson(['confirm', 'request', '--action', 'train.create', '--booking', seed.bookingId, '--manifest', manifestPath]);
    const ref = pending.data.confirmation_ref as string;
    const before = await footprint(api);
    const res = await ito(['train', '--booking', seed.bookingId, '--manifest', manifestPath, '--confirmation-ref', ref, '--idempotency-key', 'flow-unapproved', '--json']);
    expect(res.code).toBe(1);
    expect(res.stdout.trim().split('\n')).toHaveLength(1);
    expect(res.json()).toMatchObject({ ok: false, live_api_contacted: true, error: { code: 'confirmation_pending' } });
    // Nothing at all: no run, no event, no idempotency record, no consumed confirmation.
    expect(await footprint(api)).toEqual(before);
    const { rows } = await api.pool.query(`select count(*)::int as n from runs where idempotency_key = 'flow-unapproved'`);
    expect(rows[0].n).toBe(0);
    expect(await confirmationStatus(ref)).toBe('pending');
  });

  it('train and cancel with an empty --confirmation-ref reach the API, which answers confirmation_required (exit 1), leaving nothing', async () => {
    const before = await footprint(api);
    const train = await ito(['train', '--booking', seed.bookingId, '--manifest', manifestPath, '--confirmation-ref', '', '--idempotency-key', 'flow-no-ref', '--json']);
    expect(train.code).toBe(1);
    expect(train.json()).toMatchObject({ ok: false, live_api_contacted: true, error: { code: 'confirmation_required' } });
    const cancel = await ito(['cancel', runId, '--confirmation-ref', '', '--idempotency-key', 'flow-no-ref-cancel', '--json']);
    expect(cancel.code).toBe(1);
    expect(cancel.json()).toMatchObject({ ok: false, live_api_contacted: true, error: { code: 'confirmation_required' } });
    expect(await footprint(api)).toEqual(before);
  });

  it('train without --confirmation-ref is a usage error (exit 2) that contacts nothing', async () => {
    const before = await footprint(api);
    const res = await ito(['train', '--booking', seed.bookingId, '--manifest', manifestPath, '--idempotency-key', 'flow-no-flag', '--json']);
    expect(res.code).toBe(2);
    expect(res.json()).toMatchObject({ ok: false, live_api_contacted: false, error: { code: 'validation_failed', message: 'missing --confirmation-ref <ref>' } });
    expect(await footprint(api)).toEqual(before);
  });

  it('status finds the run by id and by --idempotency-key, matching the database', async () => {
    const row = await runRow(runId);
    const byId = await okJson(['status', runId]);
    expect(byId.data).toMatchObject({ run_id: runId, state: row.state, booking_id: seed.bookingId, idempotency_key: KEY });
    const byKey = await okJson(['status', '--idempotency-key', KEY]);
    expect(byKey.data).toMatchObject({ run_id: runId, state: row.state, idempotency_key: KEY });
  });

  it('events, logs, metrics and checkpoints read the run stream as the orchestrator wrote it', async () => {
    await orchestrate(runId, [
      { type: 'StageStarted', data: { stage: 'pretrain' } },
      { type: 'ProgressRecorded', data: { stage: 'pretrain', step: 100, tokens: 4096000, loss: 2.5 } },
      { type: 'CheckpointSaved', data: { checkpoint_id: 'ckpt_100', step: 100, uri: 's3://acme-ckpt/run/ckpt_100', bytes: 1048576, save_seconds: 3 } },
      { type: 'ProgressRecorded', data: { stage: 'pretrain', step: 200, tokens: 8192000, loss: 2.1 } },
    ]);
    const stream = await api.ledger.readStream(runStreamId(runId), { tenantId: seed.tenant.tenant_id });

    const events = await okJson(['events', runId]);
    expect(events.data.run_id).toBe(runId);
    expect(events.data.events.map((e: any) => [e.position, e.version, e.type])).toEqual(stream.map((e) => [e.position, e.streamVersion, e.type]));

    const logs = await okJson(['logs', runId]);
    expect(logs.data.lines.map((l: any) => [l.cursor, l.type])).toEqual(stream.map((e) => [e.streamVersion, e.type]));
    expect(logs.data.next_cursor).toBe(stream.at(-1)!.streamVersion);
    expect(logs.data.lines.map((l: any) => l.message)).toContain('checkpoint ckpt_100 saved at step 100 (1.05 MB in 3 s)');

    const metrics = await okJson(['metrics', runId]);
    expect(metrics.data).toMatchObject({
      run_id: runId,
      state: 'training',
      latest: { stage: 'pretrain', step: 200, tokens: 8192000, loss: 2.1 },
      series: [
        { stage: 'pretrain', step: 100, tokens: 4096000, loss: 2.5, throughput_tokens_per_s: null },
        { stage: 'pretrain', step: 200, tokens: 8192000, loss: 2.1, throughput_tokens_per_s: null },
      ],
      stages: [{ stage: 'pretrain', attempts: 1, status: 'running', completed_at: null }],
      evaluations: [],
      checkpoints: 1,
    });

    const checkpoints = await okJson(['checkpoints', runId]);
    expect(checkpoints.data).toEqual({
      run_id: runId,
      state: 'training',
      checkpoints: [{ checkpoint_id: 'ckpt_100', step: 100, uri: 's3://acme-ckpt/run/ckpt_100', bytes: 1048576, save_seconds: 3, bandwidth_bytes_per_s: 349525 }],
    });
    expect((await runRow(runId)).state).toBe('training');
  });

  it('cancel with an approved run.cancel confirmation moves the running run to cancelling', async () => {
    const ref = await requestAndApprove('run.cancel', runId);
    const out = await okJson(['cancel', runId, '--confirmation-ref', ref, '--idempotency-key', 'flow-cancel-1']);
    expect(out.data).toMatchObject({ run_id: runId, state: 'cancelling', events: ['CancelRequested'] });
    expect((await runRow(runId)).state).toBe('cancelling');
    expect(await confirmationStatus(ref)).toBe('consumed');
    // The orchestrator stops the nodes and records the end of the run.
    await orchestrate(runId, [{ type: 'RunCancelled', data: { reason: 'cancelled by the requester' } }]);
    expect((await runRow(runId)).state).toBe('cancelled');
  });

  it('logs --follow reads every line by cursor and stops once the run has ended', async () => {
    const stream = await api.ledger.readStream(runStreamId(runId), { tenantId: seed.tenant.tenant_id });
    const out = await okJson(['logs', runId, '--follow', '--interval', '50']);
    expect(out.data.lines.map((l: any) => l.cursor)).toEqual(stream.map((e) => e.streamVersion));
    expect(out.data.lines.at(-1)).toMatchObject({ type: 'RunCancelled', message: 'run cancelled: cancelled by the requester' });
    expect(out.data.next_cursor).toBe(stream.at(-1)!.streamVersion);
    expect(out.data.run).toMatchObject({ run_id: runId, state: 'cancelled' });
  });

  it('cleanup --release-booking without its own confirmation is a usage error that contacts nothing', async () => {
    const before = await footprint(api);
    const res = await ito(['cleanup', runId, '--confirmation-ref', 'cfm_unused', '--idempotency-key', 'flow-cleanup-x', '--release-booking', '--json']);
    expect(res.code).toBe(2);
    const out = res.json();
    expect(out).toMatchObject({ ok: false, live_api_contacted: false, error: { code: 'validation_failed' } });
    expect(out.error.message).toMatch(/--release-confirmation-ref/);
    expect(out.error.message).toMatch(/booking\.release/);
    expect(await footprint(api)).toEqual(before);
  });

  it('cleanup with run.cleanup and booking.release confirmations cleans the run and releases the booking', async () => {
    const cleanupRef = await requestAndApprove('run.cleanup', runId);
    const releaseRef = await requestAndApprove('booking.release', runId);
    const out = await okJson([
      'cleanup', runId, '--confirmation-ref', cleanupRef, '--idempotency-key', 'flow-cleanup-1', '--release-booking', '--release-confirmation-ref', releaseRef,
    ]);
    expect(out.data).toMatchObject({ run_id: runId, state: 'cleaning_up', booking_released: true, to_remove: ['s3://acme-ckpt/run/ckpt_100'] });
    expect((await runRow(runId)).state).toBe('cleaning_up');
    expect(await confirmationStatus(cleanupRef)).toBe('consumed');
    expect(await confirmationStatus(releaseRef)).toBe('consumed');
    const { rows } = await api.pool.query('select status from bookings where booking_id = $1', [seed.bookingId]);
    expect(rows[0].status).toBe('released');
  });
});

describe('human output of plan, confirm and status', () => {
  // A tenant of its own: the first one's booking was released by the cleanup above.
  let other: Seed;
  const as = (key: string, args: string[]) => runCli(args, { env: { ITO_API_URL: api.url, ITO_API_KEY: key, ITO_HOME: join(dir, 'home2') } });
  beforeAll(async () => {
    other = await seedTenant(api);
  });

  /** No nested plan printed as one JSON line: no object or array literal anywhere in the text. */
  function expectNoJsonDump(text: string): void {
    for (const line of text.split('\n')) {
      expect(line, line).not.toMatch(/[{[]\s*"/);
      expect(line).not.toMatch(/stage_plans|"phases"/);
    }
  }

  it('plan shows the summary, the reasons as a list and the phases as a table', async () => {
    const json = await as(other.requester, ['plan', '--booking', other.bookingId, '--manifest', manifestPath, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const plan = json.json().data.plan;
    const res = await as(other.requester, ['plan', '--booking', other.bookingId, '--manifest', manifestPath]);
    expect(res.code, res.stderr).toBe(0);
    for (const label of ['tp', 'pp', 'dp', 'cp', 'precision', 'micro-batch', 'memory/GPU', 'tokens/s', 'MFU assumption', 'hours', 'GPU-hours', 'estimated cost', 'incremental cost', 'digest']) {
      expect(res.stdout).toMatch(new RegExp(`^${label.replace('/', '\\/')}\\s{2,}\\S`, 'm'));
    }
    expect(res.stdout).toMatch(new RegExp(`^precision\\s+${plan.precision}$`, 'm'));
    expect(res.stdout).toContain(DIGEST);
    expect(res.stdout).toContain('reasons:\n');
    for (const reason of plan.reasons as string[]) expect(res.stdout).toContain(`  - ${reason}`);
    expect(res.stdout).toMatch(/^phases:\n {2}PHASE\s+SEQUENCE_LENGTH\s+TOKENS\s+TOKENS_PER_S\s+HOURS$/m);
    for (const phase of plan.phases as { phase: string }[]) expect(res.stdout.split('\n').some((l) => l.startsWith(`  ${phase.phase} `))).toBe(true);
    expectNoJsonDump(res.stdout);
  });

  it('confirm request and confirm show summarise the plan the approver is asked to allow', async () => {
    const req = await as(other.requester, ['confirm', 'request', '--action', 'train.create', '--booking', other.bookingId, '--manifest', manifestPath]);
    expect(req.code, req.stderr).toBe(0);
    const ref = /^confirmation_ref\s+(\S+)$/m.exec(req.stdout)?.[1];
    expect(ref).toMatch(/\S/);
    expect(req.stdout).toContain(`An approver must run: ito confirm approve ${ref}`);
    const show = await as(other.approver, ['confirm', 'show', ref!]);
    expect(show.code, show.stderr).toBe(0);
    for (const out of [req.stdout, show.stdout]) {
      expect(out).toMatch(/^status\s+pending$/m);
      expect(out).toMatch(/^plan:\n {2}tp\s+\d+$/m);
      expect(out).toMatch(/^ {2}estimated cost\s+\$[\d,]+\.\d\d$/m);
      expect(out).toMatch(/^ {2}max incremental cost\s+\$[\d,]+\.\d\d$/m);
      expect(out).toMatch(/^ {2}reasons:\n {4}- /m);
      expect(out).toMatch(/^ {2}phases:$/m);
      expectNoJsonDump(out);
    }
    // Who asked, and every manifest field that spends money or touches data, derived from the stored bytes.
    const m = JSON.parse(EXAMPLE_MANIFEST);
    expect(show.stdout).toMatch(new RegExp(`^requested_by\\s+${other.tenant.requester_key_id}$`, 'm'));
    expect(show.stdout).toMatch(/^decided_by\s+-$/m);
    expect(show.stdout).toMatch(/^manifest:$/m);
    expect(show.stdout).toContain(`  digest         ${DIGEST}`);
    expect(show.stdout).toContain(`  model          llama 8B at ${m.model.revision} (pretrained)`);
    expect(show.stdout).toContain(`  checkpoints    ${m.checkpoint.storage} every 30 min, keep 3`);
    expect(show.stdout).toContain('  budget         ceiling $60,000.00, max incremental $4,000.00');
    expect(show.stdout).toContain('  curriculum     pretrain → mid_train → long_context → post_training');
    expect(show.stdout).toContain('  post-training  sft → dpo → rlvr');
    for (const d of m.data) expect(show.stdout).toContain(`    - ${d.ref} sha256 ${d.sha256}, ${d.tokens} tokens, license ${d.license}`);
    const approved = await as(other.approver, ['confirm', 'approve', ref!]);
    expect(approved.stdout).toMatch(new RegExp(`^decided_by\\s+${other.tenant.approver_key_id}$`, 'm'));
  });

  it('status shows the run without its stored plan JSON', async () => {
    const { rows } = await api.pool.query<{ run_id: string }>('select run_id from runs limit 1');
    const res = await ito(['status', rows[0]!.run_id]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`^run_id\\s+${rows[0]!.run_id}$`, 'm'));
    expect(res.stdout).toMatch(/^plan\s+tp \d+ · pp \d+ · dp \d+ · cp \d+ · \w+$/m);
    expectNoJsonDump(res.stdout);
  });
});
