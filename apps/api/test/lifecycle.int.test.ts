import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { footprint, seedTenant, startApi, trainBody, trainConfirmation, type Api, type Seed } from '../../../test/support/api.js';

let api: Api;
beforeAll(async () => {
  api = await startApi();
});
afterAll(async () => api.close());

async function newRun(seed: Seed): Promise<string> {
  const ref = await trainConfirmation(api, seed);
  const r = await api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, ref), headers: { 'idempotency-key': `run-${ref}` } });
  return r.body.data.run_id;
}

async function runConfirmation(seed: Seed, action: string, runId: string): Promise<string> {
  const r = await api.call('POST', '/v1/confirmations', { key: seed.requester, body: { action, run_id: runId } });
  if (!r.body.ok) throw new Error(`confirmation request refused: ${JSON.stringify(r.body)}`);
  const ref = r.body.data.confirmation_ref;
  await api.call('POST', `/v1/confirmations/${ref}/approve`, { key: seed.approver });
  return ref;
}

function mutation(seed: Seed, runId: string, action: string, body: Record<string, unknown>, key: string) {
  return api.call('POST', `/v1/runs/${runId}/${action}`, { key: seed.requester, body, headers: { 'idempotency-key': key } });
}

async function bookingStatus(seed: Seed): Promise<string> {
  return (await api.call('GET', `/v1/bookings/${seed.bookingId}`, { key: seed.requester })).body.data.status;
}

describe('run lifecycle mutations', () => {
  it('cancel, then cleanup: each with its own confirmation and key; the booking is untouched', async () => {
    const seed = await seedTenant(api);
    const runId = await newRun(seed);
    const cancelRef = await runConfirmation(seed, 'run.cancel', runId);
    const c = await mutation(seed, runId, 'cancel', { confirmation_ref: cancelRef }, 'cancel-1');
    expect(c.body.data).toMatchObject({ run_id: runId, state: 'cancelled' });
    const replay = await mutation(seed, runId, 'cancel', { confirmation_ref: cancelRef }, 'cancel-1');
    expect(replay.body.notice).toMatch(/replayed/);

    const cleanupRef = await runConfirmation(seed, 'run.cleanup', runId);
    const cl = await mutation(seed, runId, 'cleanup', { confirmation_ref: cleanupRef }, 'cleanup-1');
    expect(cl.body.data).toMatchObject({ run_id: runId, state: 'cleaned', booking_released: false, to_remove: [] });
    const events = await api.call('GET', `/v1/runs/${runId}/events`, { key: seed.requester });
    expect(events.body.data.events.map((e: any) => e.type)).toEqual([
      'RunReserved',
      'RunConfirmed',
      'PipelinePlanned',
      'CancelRequested',
      'RunCancelled',
      'CleanupStarted',
      'CleanupCompleted',
    ]);
    expect(await bookingStatus(seed)).toBe('completed');
  });

  it('cleanup releases the booking only with a separate booking.release confirmation', async () => {
    const seed = await seedTenant(api);
    const runId = await newRun(seed);
    await mutation(seed, runId, 'cancel', { confirmation_ref: await runConfirmation(seed, 'run.cancel', runId) }, 'c-2');
    const cleanupRef = await runConfirmation(seed, 'run.cleanup', runId);
    const before = await footprint(api);
    const missing = await mutation(seed, runId, 'cleanup', { confirmation_ref: cleanupRef, release_booking: true }, 'cl-2a');
    expect(missing.body.error.code).toBe('confirmation_required');
    expect(await footprint(api)).toEqual(before);
    // A cleanup confirmation cannot stand in for a release confirmation.
    const wrong = await mutation(seed, runId, 'cleanup', { confirmation_ref: cleanupRef, release_booking: true, release_confirmation_ref: cleanupRef }, 'cl-2b');
    expect(wrong.body.error.code).toBe('confirmation_mismatch');
    expect(await footprint(api)).toEqual(before);
    const releaseRef = await runConfirmation(seed, 'booking.release', runId);
    const ok = await mutation(seed, runId, 'cleanup', { confirmation_ref: cleanupRef, release_booking: true, release_confirmation_ref: releaseRef }, 'cl-2c');
    expect(ok.body.data).toMatchObject({ state: 'cleaned', booking_released: true });
    expect(await bookingStatus(seed)).toBe('released');
  });

  it('invalid transitions are invalid_state and consume nothing', async () => {
    const seed = await seedTenant(api);
    const runId = await newRun(seed);
    const restartRef = await runConfirmation(seed, 'run.restart', runId);
    const cleanupRef = await runConfirmation(seed, 'run.cleanup', runId);
    const before = await footprint(api);
    expect((await mutation(seed, runId, 'restart', { confirmation_ref: restartRef }, 'r-1')).body.error.code).toBe('invalid_state');
    expect((await mutation(seed, runId, 'cleanup', { confirmation_ref: cleanupRef }, 'cl-3')).body.error.code).toBe('invalid_state');
    expect(await footprint(api)).toEqual(before);
  });

  it('a confirmation for another action or run is confirmation_mismatch', async () => {
    const seed = await seedTenant(api);
    const runA = await newRun(seed);
    const runB = await newRun(seed);
    const cleanupA = await runConfirmation(seed, 'run.cleanup', runA);
    const cancelB = await runConfirmation(seed, 'run.cancel', runB);
    const before = await footprint(api);
    expect((await mutation(seed, runA, 'cancel', { confirmation_ref: cleanupA }, 'mm-1')).body.error.code).toBe('confirmation_mismatch');
    expect((await mutation(seed, runA, 'cancel', { confirmation_ref: cancelB }, 'mm-2')).body.error.code).toBe('confirmation_mismatch');
    expect(await footprint(api)).toEqual(before);
  });

  it('cancel, cleanup and restart without a confirmation_ref are confirmation_required (428) and leave nothing', async () => {
    const seed = await seedTenant(api);
    const runId = await newRun(seed);
    const ref = await runConfirmation(seed, 'run.cancel', runId);
    const before = await footprint(api);
    for (const action of ['cancel', 'cleanup', 'restart']) {
      for (const [label, body] of [['missing', {}], ['empty', { confirmation_ref: '' }]] as const) {
        const r = await mutation(seed, runId, action, body, `none-${action}`);
        expect(r.status, `${action} ${label}`).toBe(428);
        expect(r.body).toMatchObject({ ok: false, error: { code: 'confirmation_required' } });
        expect(r.body.error.message).toContain(`run.${action}`);
      }
    }
    expect(await footprint(api)).toEqual(before);
    const { rows } = await api.pool.query<{ status: string; failed_uses: number }>('select status, failed_uses from confirmations where ref = $1', [ref]);
    expect(rows).toEqual([{ status: 'approved', failed_uses: 0 }]);
    expect((await api.call('GET', `/v1/runs/${runId}`, { key: seed.requester })).body.data.state).toBe('confirmed');
    // A run of another tenant is still not_found, whatever the body lacks.
    const other = await seedTenant(api);
    const cross = await api.call('POST', `/v1/runs/${runId}/cancel`, { key: other.requester, body: {}, headers: { 'idempotency-key': 'none-x' } });
    expect(cross.body.error.code).toBe('not_found');
  });

  it('mutations need an Idempotency-Key and a run of this tenant', async () => {
    const seed = await seedTenant(api);
    const runId = await newRun(seed);
    const ref = await runConfirmation(seed, 'run.cancel', runId);
    const noKey = await api.call('POST', `/v1/runs/${runId}/cancel`, { key: seed.requester, body: { confirmation_ref: ref } });
    expect(noKey.body.error.code).toBe('idempotency_key_required');
    const other = await seedTenant(api);
    const cross = await api.call('POST', `/v1/runs/${runId}/cancel`, { key: other.requester, body: { confirmation_ref: ref }, headers: { 'idempotency-key': 'x-1' } });
    expect(cross.body.error.code).toBe('not_found');
  });
});

describe('run reads', () => {
  it('logs page by cursor; metrics and checkpoints are projections of the run stream', async () => {
    const seed = await seedTenant(api);
    const runId = await newRun(seed);
    // Stand in for the node agent: record progress and a checkpoint on the run stream.
    const version = (await api.pool.query('select version from runs where run_id = $1', [runId])).rows[0].version;
    await api.ledger.transaction(async (tx) => {
      await tx.append(
        `run-${runId}`,
        [
          { type: 'StageStarted', data: { run_id: runId, stage: 'pretrain' } },
          { type: 'ProgressRecorded', data: { run_id: runId, stage: 'pretrain', step: 100, tokens: 1_000_000, loss: 2.5 } },
          { type: 'CheckpointSaved', data: { run_id: runId, checkpoint_id: 'ck-100', step: 100, uri: 's3://acme-checkpoints/code-8b-cpt/ck-100', bytes: 1024, save_seconds: 2 } },
        ],
        { tenantId: seed.tenant.tenant_id, expectedVersion: version },
      );
    });
    const page1 = await api.call('GET', `/v1/runs/${runId}/logs?limit=2`, { key: seed.requester });
    expect(page1.body.data.lines).toHaveLength(2);
    const page2 = await api.call('GET', `/v1/runs/${runId}/logs?cursor=${page1.body.data.next_cursor}`, { key: seed.requester });
    expect(page2.body.data.lines.map((l: any) => l.type)).toEqual(['PipelinePlanned', 'StageStarted', 'ProgressRecorded', 'CheckpointSaved']);
    const metrics = await api.call('GET', `/v1/runs/${runId}/metrics`, { key: seed.requester });
    expect(metrics.body.data.latest).toEqual({ stage: 'pretrain', step: 100, tokens: 1_000_000, loss: 2.5 });
    const cps = await api.call('GET', `/v1/runs/${runId}/checkpoints`, { key: seed.requester });
    expect(cps.body.data.checkpoints).toEqual([
      { checkpoint_id: 'ck-100', step: 100, uri: 's3://acme-checkpoints/code-8b-cpt/ck-100', bytes: 1024, save_seconds: 2, bandwidth_bytes_per_s: 512 },
    ]);
    const run = await api.call('GET', `/v1/runs/${runId}`, { key: seed.requester });
    expect(run.body.data).toMatchObject({ state: 'training', stage: 'pretrain', progress: { stage: 'pretrain', step: 100, tokens: 1_000_000, loss: 2.5 } });
  });
});

describe('a run action confirmation the run has ruled out', () => {
  async function refusedRequest(seed: Seed, action: string, runId: string, state: string) {
    const before = await footprint(api);
    const r = await api.call('POST', '/v1/confirmations', { key: seed.requester, body: { action, run_id: runId } });
    expect(r.status, JSON.stringify(r.body)).toBe(409);
    expect(r.body.error.code).toBe('invalid_state');
    expect(r.body.error.message).toContain(`is ${state}: ${action} can no longer apply`);
    expect(await footprint(api)).toEqual(before);
  }

  it('is refused when requested (a cancel or restart of an ended run, a cleanup of a cleaned one); one that may still apply is not', async () => {
    const seed = await seedTenant(api);
    const runId = await newRun(seed);
    await mutation(seed, runId, 'cancel', { confirmation_ref: await runConfirmation(seed, 'run.cancel', runId) }, 'ruled-out-1');
    await refusedRequest(seed, 'run.cancel', runId, 'cancelled');
    await refusedRequest(seed, 'run.restart', runId, 'cancelled');
    const cleanupRef = await runConfirmation(seed, 'run.cleanup', runId);
    await mutation(seed, runId, 'cleanup', { confirmation_ref: cleanupRef }, 'ruled-out-2');
    await refusedRequest(seed, 'run.cleanup', runId, 'cleaned');
    await refusedRequest(seed, 'booking.release', runId, 'cleaned');
    // A cleanup asked for while the run is active applies once it ends: requested as before.
    const active = await newRun(seed);
    const r = await api.call('POST', '/v1/confirmations', { key: seed.requester, body: { action: 'run.cleanup', run_id: active } });
    expect(r.status).toBe(201);
  });
});

describe('what a lifecycle mutation answers and records', () => {
  const metadataOf = async (streamId: string) =>
    (await api.pool.query<{ type: string; data: any; metadata: any }>('select type, data, metadata from events where stream_id = $1 order by stream_version', [streamId])).rows;

  it('a cleanup lists the checkpoints it removes; each event names its actor and key; a release names the run it served', async () => {
    const seed = await seedTenant(api);
    const runId = await newRun(seed);
    const uri = 's3://acme-checkpoints/code-8b-cpt/ck-7';
    const version = (await api.pool.query('select version from runs where run_id = $1', [runId])).rows[0].version;
    await api.ledger.transaction(async (tx) => {
      await tx.append(`run-${runId}`, [{ type: 'CheckpointSaved', data: { run_id: runId, checkpoint_id: 'ck-7', step: 7, uri, bytes: 1, save_seconds: 1 } }], { tenantId: seed.tenant.tenant_id, expectedVersion: version });
    });
    const cancel = await mutation(seed, runId, 'cancel', { confirmation_ref: await runConfirmation(seed, 'run.cancel', runId), release_booking: true }, 'meta-cancel');
    // release_booking means nothing to a cancel: no release confirmation is asked for, and the answer says nothing of cleanup.
    expect(cancel.body.data).toStrictEqual({ run_id: runId, state: 'cancelled', events: ['CancelRequested', 'RunCancelled'] });
    const cleanup = await mutation(
      seed,
      runId,
      'cleanup',
      { confirmation_ref: await runConfirmation(seed, 'run.cleanup', runId), release_booking: true, release_confirmation_ref: await runConfirmation(seed, 'booking.release', runId) },
      'meta-cleanup',
    );
    expect(cleanup.body.data).toStrictEqual({ run_id: runId, state: 'cleaning_up', events: ['CleanupStarted'], booking_released: true, to_remove: [uri] });

    const runEvents = await metadataOf(`run-${runId}`);
    const mine = runEvents.filter((e) => ['CancelRequested', 'RunCancelled', 'CleanupStarted'].includes(e.type));
    expect(mine.map((e) => e.metadata.idempotencyKey)).toEqual(['meta-cancel', 'meta-cancel', 'meta-cleanup']);
    const actor = mine[0]!.metadata.actor;
    expect(typeof actor).toBe('string');
    expect(actor.length).toBeGreaterThan(0);
    for (const e of mine) expect(e.metadata.actor).toBe(actor);
    const released = (await metadataOf(`booking-${seed.bookingId}`)).at(-1)!;
    expect(released).toMatchObject({ type: 'BookingStatusChanged', data: { status: 'released', reason: `released by cleanup of run ${runId}` }, metadata: { actor } });
  });

  it('a key used for one action cannot replay as another', async () => {
    const seed = await seedTenant(api);
    const runId = await newRun(seed);
    const ref = await runConfirmation(seed, 'run.cancel', runId);
    await mutation(seed, runId, 'cancel', { confirmation_ref: ref }, 'one-key');
    const other = await mutation(seed, runId, 'cleanup', { confirmation_ref: ref }, 'one-key');
    expect(other.body.error.code).toBe('idempotency_key_reused');
  });

  it('refusals say what is missing: no such run, or which field lacks the release confirmation', async () => {
    const seed = await seedTenant(api);
    const missing = await mutation(seed, `run_${'f'.repeat(32)}`, 'cancel', { confirmation_ref: 'cfm_x' }, 'nf-1');
    expect([missing.body.error.code, missing.body.error.message]).toEqual(['not_found', 'no such run']);
    const runId = await newRun(seed);
    await mutation(seed, runId, 'cancel', { confirmation_ref: await runConfirmation(seed, 'run.cancel', runId) }, 'rf-1');
    const noRelease = await mutation(seed, runId, 'cleanup', { confirmation_ref: await runConfirmation(seed, 'run.cleanup', runId), release_booking: true }, 'rf-2');
    expect(noRelease.body.error.code).toBe('confirmation_required');
    expect(noRelease.body.error.message).toMatch(/booking\.release confirmation: .* send its reference as release_confirmation_ref$/);
  });
});
