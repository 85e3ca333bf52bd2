import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestDigest } from '@ito/contracts';
import { EXAMPLE_MANIFEST, footprint, seedTenant, startApi, trainBody, trainConfirmation, type Api, type Seed } from '../../../test/support/api.js';

let api: Api;
beforeAll(async () => {
  api = await startApi();
});
afterAll(async () => api.close());

function mutate(fn: (m: any) => void): string {
  const m = JSON.parse(EXAMPLE_MANIFEST);
  fn(m);
  return JSON.stringify(m, null, 2);
}

/** Runs a train call expected to be refused and checks nothing was left behind by it. */
async function refused(seed: Seed, body: unknown, key: string | undefined, idem: string | undefined, code: string) {
  const before = await footprint(api);
  const r = await api.call('POST', '/v1/runs', { ...(key ? { key } : {}), body, headers: idem === undefined ? {} : { 'idempotency-key': idem } });
  expect(r.body.ok).toBe(false);
  expect(r.body.error.code).toBe(code);
  expect(r.body.live_api_contacted).toBe(true);
  expect(await footprint(api)).toEqual(before);
  return r;
}

describe('POST /v1/runs — the happy path', () => {
  it('creates one run in state confirmed with stable ids, consuming the confirmation', async () => {
    const seed = await seedTenant(api);
    const ref = await trainConfirmation(api, seed);
    const r = await api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, ref), headers: { 'idempotency-key': 'train-happy-1' } });
    expect(r.status).toBe(201);
    expect(r.body.ok).toBe(true);
    // No agent of the seed's booking has dialled in: accepted, with a warning (run-waiting.int.test.ts).
    expect(r.body.notice).toMatch(/^no node of booking .* is live \(0 of 2\)/);
    const d = r.body.data;
    expect(d.run_id).toMatch(/^run_[0-9a-f]{32}$/);
    expect(d).toMatchObject({ booking_id: seed.bookingId, manifest_digest: manifestDigest(EXAMPLE_MANIFEST), idempotency_key: 'train-happy-1', state: 'confirmed' });

    const run = await api.call('GET', `/v1/runs/${d.run_id}`, { key: seed.requester });
    expect(run.body.data).toMatchObject({ run_id: d.run_id, state: 'confirmed', booking_id: seed.bookingId, idempotency_key: 'train-happy-1' });
    // One fact, one value: the time train reports is the time status shows, to the millisecond.
    expect(run.body.data.created_at).toBe(d.created_at);
    const events = await api.call('GET', `/v1/runs/${d.run_id}/events`, { key: seed.requester });
    expect(events.body.data.events.map((e: any) => e.type)).toEqual(['RunReserved', 'RunConfirmed', 'PipelinePlanned']);
    const c = await api.call('GET', `/v1/confirmations/${ref}`, { key: seed.requester });
    expect(c.body.data.status).toBe('consumed');
    const byKey = await api.call('GET', '/v1/runs?idempotency_key=train-happy-1', { key: seed.requester });
    expect(byKey.body.data.runs.map((x: any) => x.run_id)).toEqual([d.run_id]);
    // Every event of the reservation records who asked and under which key.
    const stored = await api.pool.query(`select metadata from events where stream_id = $1 order by stream_version`, [`run-${d.run_id}`]);
    expect(stored.rows).toHaveLength(3);
    for (const row of stored.rows) expect(row.metadata).toMatchObject({ actor: expect.any(String), idempotencyKey: 'train-happy-1' });
    // The consumed confirmation and the run's first events are one multi-stream append: one statement, in that order.
    const written = await api.pool.query<{ type: string; position: string; transaction_id: string }>(
      `select type, position::text, transaction_id::text from events
       where (type = 'ConfirmationConsumed' and data->>'ref' = $1) or stream_id = $2 order by events.position`,
      [ref, `run-${d.run_id}`],
    );
    expect(written.rows.map((row) => row.type)).toEqual(['ConfirmationConsumed', 'RunReserved', 'RunConfirmed', 'PipelinePlanned']);
    expect(new Set(written.rows.map((row) => row.transaction_id)).size).toBe(1);
    const positions = written.rows.map((row) => Number(row.position));
    expect(positions).toEqual(positions.map((_, i) => positions[0]! + i));
  });

  it('the same key and request replays the first answer and says so; a different request is idempotency_key_reused', async () => {
    const seed = await seedTenant(api);
    const ref = await trainConfirmation(api, seed);
    const headers = { 'idempotency-key': 'train-replay-1' };
    const first = await api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, ref), headers });
    const again = await api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, ref), headers });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(first.body.data);
    expect(again.body.notice).toMatch(/replayed/);
    const ref2 = await trainConfirmation(api, seed);
    const before = await footprint(api);
    const other = await api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, ref2), headers });
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_key_reused');
    expect(await footprint(api)).toEqual(before);
    const c2 = await api.call('GET', `/v1/confirmations/${ref2}`, { key: seed.requester });
    expect(c2.body.data.status).toBe('approved');
  });

  it('keys are scoped to the tenant: another tenant may use the same key string', async () => {
    const a = await seedTenant(api);
    const b = await seedTenant(api);
    const headers = { 'idempotency-key': 'shared-key-string' };
    const ra = await api.call('POST', '/v1/runs', { key: a.requester, body: trainBody(a, await trainConfirmation(api, a)), headers });
    const rb = await api.call('POST', '/v1/runs', { key: b.requester, body: trainBody(b, await trainConfirmation(api, b)), headers });
    expect(ra.status).toBe(201);
    expect(rb.status).toBe(201);
    expect(ra.body.data.run_id).not.toBe(rb.body.data.run_id);
    const cross = await api.call('GET', `/v1/runs/${ra.body.data.run_id}`, { key: b.requester });
    expect(cross.status).toBe(404);
    expect(cross.body.error.code).toBe('not_found');
  });
});

describe('POST /v1/runs — every gate fails closed, in order, leaving nothing behind', () => {
  it('gate 1: credential', async () => {
    const seed = await seedTenant(api);
    const ref = await trainConfirmation(api, seed);
    await refused(seed, trainBody(seed, ref), undefined, 'k-g1a', 'unauthenticated');
    await refused(seed, trainBody(seed, ref), 'ito_sk_not-a-real-key-at-all', 'k-g1b', 'unauthenticated');
    await refused(seed, trainBody(seed, ref), seed.approver, 'k-g1c', 'forbidden');
    const revoked = await api.admin.createKey({ tenantId: seed.tenant.tenant_id, scopes: ['runs:write'], principal: 'ml-team@acme' });
    await api.admin.revokeKey({ keyId: revoked.key_id });
    await refused(seed, trainBody(seed, ref), revoked.key, 'k-g1d', 'credential_revoked');
  });

  it('gate 2: idempotency key required and well formed (checked before the body)', async () => {
    const seed = await seedTenant(api);
    const ref = await trainConfirmation(api, seed);
    await refused(seed, trainBody(seed, ref), seed.requester, undefined, 'idempotency_key_required');
    await refused(seed, { nonsense: true }, seed.requester, undefined, 'idempotency_key_required');
    await refused(seed, trainBody(seed, ref), seed.requester, 'has space', 'idempotency_key_invalid');
    await refused(seed, trainBody(seed, ref), seed.requester, 'x'.repeat(256), 'idempotency_key_invalid');
  });

  it('gate 3: booking', async () => {
    const seed = await seedTenant(api);
    const ref = await trainConfirmation(api, seed);
    await refused(seed, { ...trainBody(seed, ref), booking_id: 'bkg_unknown' }, seed.requester, 'k-g3a', 'booking_not_found');
    const other = await seedTenant(api);
    await refused(seed, { ...trainBody(seed, ref), booking_id: other.bookingId }, seed.requester, 'k-g3b', 'booking_not_found');
    for (const [status, code] of [
      ['expired', 'booking_expired'],
      ['revoked', 'booking_revoked'],
      ['released', 'booking_released'],
    ] as const) {
      const s = await seedTenant(api);
      const r = await trainConfirmation(api, s);
      await api.admin.setBookingStatus({ bookingId: s.bookingId, status });
      await refused(s, trainBody(s, r), s.requester, `k-g3-${status}`, code);
    }
    const pending = await seedTenant(api, { status: 'pending' });
    await refused(pending, trainBody(pending, 'cfm_whatever'), pending.requester, 'k-g3p', 'booking_incomplete');
  });

  it('gate 3: a term that ended is booking_expired even while the desk still says completed', async () => {
    const seed = await seedTenant(api);
    const ref = await trainConfirmation(api, seed);
    api.clock.offsetMs = 31 * 86400_000;
    try {
      await refused(seed, trainBody(seed, ref), seed.requester, 'k-g3-term', 'booking_expired');
    } finally {
      api.clock.offsetMs = 0;
    }
  });

  it('gate 4: manifest schema, secrets and digest', async () => {
    const seed = await seedTenant(api);
    const ref = await trainConfirmation(api, seed);
    const unknownKey = mutate((m) => (m.surprise = true));
    await refused(seed, { ...trainBody(seed, ref), manifest: unknownKey, manifest_digest: manifestDigest(unknownKey) }, seed.requester, 'k-g4a', 'manifest_invalid');
    const secret = mutate((m) => (m.data[0].ref = 's3://AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI%2FK7MDENG@acme-training-data/x/'));
    const r = await refused(seed, { ...trainBody(seed, ref), manifest: secret, manifest_digest: manifestDigest(secret) }, seed.requester, 'k-g4b', 'manifest_contains_secret');
    expect(JSON.stringify(r.body)).not.toContain('wJalrXUtnFEMI');
    expect(r.body.error.message).toContain('$.data[0].ref');
    await refused(seed, { ...trainBody(seed, ref), manifest_digest: manifestDigest('something else') }, seed.requester, 'k-g4c', 'manifest_digest_mismatch');
  });

  it('gate 5: confirmation — unknown, pending, denied, expired, consumed, mismatch', async () => {
    const seed = await seedTenant(api);
    await refused(seed, trainBody(seed, 'cfm_unknown'), seed.requester, 'k-g5a', 'confirmation_not_found');
    const pending = await trainConfirmation(api, seed, EXAMPLE_MANIFEST, { approve: false });
    await refused(seed, trainBody(seed, pending), seed.requester, 'k-g5b', 'confirmation_pending');
    const denied = await trainConfirmation(api, seed, EXAMPLE_MANIFEST, { approve: false });
    await api.call('POST', `/v1/confirmations/${denied}/deny`, { key: seed.approver });
    await refused(seed, trainBody(seed, denied), seed.requester, 'k-g5c', 'confirmation_denied');
    const late = await trainConfirmation(api, seed);
    api.clock.offsetMs = 11 * 60_000;
    try {
      await refused(seed, trainBody(seed, late), seed.requester, 'k-g5d', 'confirmation_expired');
    } finally {
      api.clock.offsetMs = 0;
    }
    const used = await trainConfirmation(api, seed);
    expect((await api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, used), headers: { 'idempotency-key': 'k-g5-first' } })).status).toBe(201);
    await refused(seed, trainBody(seed, used), seed.requester, 'k-g5e', 'confirmation_consumed');
    // The same reference presented for a different manifest: bound to the digest it was approved for.
    const bound = await trainConfirmation(api, seed);
    const other = mutate((m) => (m.name = 'another-run'));
    await refused(seed, { ...trainBody(seed, bound, other) }, seed.requester, 'k-g5f', 'confirmation_mismatch');
    // A confirmation from another tenant does not exist here.
    const stranger = await seedTenant(api);
    const theirs = await trainConfirmation(api, stranger);
    await refused(seed, trainBody(seed, theirs), seed.requester, 'k-g5g', 'confirmation_not_found');
  });

  it('gate 5: a missing or empty confirmation_ref is confirmation_required (428), after the booking and manifest gates', async () => {
    const seed = await seedTenant(api);
    const ref = await trainConfirmation(api, seed);
    const { confirmation_ref: _dropped, ...withoutRef } = trainBody(seed, ref);
    const missing = await refused(seed, withoutRef, seed.requester, 'k-g5-none', 'confirmation_required');
    expect(missing.status).toBe(428);
    expect(missing.body.error.message).toBe(
      'this call needs an approved train.create confirmation: request one (POST /v1/confirmations), have an approver approve it, and send its reference as confirmation_ref',
    );
    const empty = await refused(seed, { ...withoutRef, confirmation_ref: '' }, seed.requester, 'k-g5-none', 'confirmation_required');
    expect(empty.status).toBe(428);
    // In gate order: the booking and the manifest answer first.
    await refused(seed, { ...withoutRef, booking_id: 'bkg_unknown' }, seed.requester, 'k-g5-none', 'booking_not_found');
    await refused(seed, { ...withoutRef, manifest_digest: manifestDigest('other') }, seed.requester, 'k-g5-none', 'manifest_digest_mismatch');
    // Nothing was held: the approved confirmation is untouched and the same key then starts the run.
    const { rows } = await api.pool.query<{ status: string; failed_uses: number }>('select status, failed_uses from confirmations where ref = $1', [ref]);
    expect(rows).toEqual([{ status: 'approved', failed_uses: 0 }]);
    const started = await api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, ref), headers: { 'idempotency-key': 'k-g5-none' } });
    expect(started.status).toBe(201);
  });

  it('a request failing several gates is refused by the earliest, for every pair of adjacent gates', async () => {
    const seed = await seedTenant(api);
    const ref = await trainConfirmation(api, seed);
    const pending = await trainConfirmation(api, seed, EXAMPLE_MANIFEST, { approve: false });
    const secret = mutate((m) => (m.data[0].ref = 's3://AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI%2FK7MDENG@acme-training-data/x/'));
    const badBooking = { ...trainBody(seed, 'cfm_unknown'), booking_id: 'bkg_unknown' };
    const badManifest = { ...trainBody(seed, 'cfm_unknown'), manifest: secret, manifest_digest: manifestDigest(secret) };
    const badDigest = { ...trainBody(seed, 'cfm_unknown'), manifest_digest: manifestDigest('other') };
    const cases: Array<[string, unknown, string | undefined, string | undefined, string]> = [
      // 1 before 2, 3, 4, 5: no credential, no key, unknown booking, a secret in the manifest, unknown confirmation.
      ['1 < 2..5', { ...badManifest, booking_id: 'bkg_unknown' }, undefined, undefined, 'unauthenticated'],
      ['1 (scope) < 3..5', badBooking, seed.approver, 'k-many-1', 'forbidden'],
      // 2 before 3..5.
      ['2 < 3..5', { ...badManifest, booking_id: 'bkg_unknown' }, seed.requester, undefined, 'idempotency_key_required'],
      ['2 (shape) < 3..5', badBooking, seed.requester, 'has space', 'idempotency_key_invalid'],
      // 3 before 4 and 5.
      ['3 < 4, 5', { ...badManifest, booking_id: 'bkg_unknown' }, seed.requester, 'k-many-3', 'booking_not_found'],
      // 4 before 5, each of its checks.
      ['4 (secret) < 5', badManifest, seed.requester, 'k-many-4a', 'manifest_contains_secret'],
      ['4 (digest) < 5', badDigest, seed.requester, 'k-many-4b', 'manifest_digest_mismatch'],
      ['4 (digest) < 5 (pending)', { ...trainBody(seed, pending), manifest_digest: manifestDigest('other') }, seed.requester, 'k-many-4c', 'manifest_digest_mismatch'],
    ];
    expect(cases.length).toBe(8);
    for (const [, body, key, idem, code] of cases) await refused(seed, body, key, idem, code);
    // 5 before 6: under a policy gate 6 would refuse, an unapproved confirmation answers first.
    await api.admin.setTenantPolicy({ tenantId: seed.tenant.tenant_id, policy: { allowed_licenses: ['mit'] } });
    try {
      await refused(seed, trainBody(seed, pending), seed.requester, 'k-many-5', 'confirmation_pending');
      await refused(seed, trainBody(seed, ref), seed.requester, 'k-many-6', 'data_policy_violation');
    } finally {
      await api.admin.setTenantPolicy({ tenantId: seed.tenant.tenant_id, policy: { allowed_licenses: ['proprietary-owned', 'cc-by-4.0'], checkpoint_storage: { schemes: ['s3'], prefixes: [] } } });
    }
    const { rows } = await api.pool.query<{ ref: string; status: string }>('select ref, status from confirmations where ref = any($1) order by ref', [[ref, pending].sort()]);
    expect(rows.map((r) => r.status)).toEqual([ref, pending].sort().map((r) => (r === ref ? 'approved' : 'pending')));
  });

  it('gate 5: five failed uses lock the reference, even once it is approved', async () => {
    const seed = await seedTenant(api);
    const ref = await trainConfirmation(api, seed, EXAMPLE_MANIFEST, { approve: false });
    for (let i = 0; i < 5; i++) await refused(seed, trainBody(seed, ref), seed.requester, `k-lock-${i}`, 'confirmation_pending');
    await api.call('POST', `/v1/confirmations/${ref}/approve`, { key: seed.approver });
    await refused(seed, trainBody(seed, ref), seed.requester, 'k-lock-5', 'confirmation_locked');
  });

  it('gate 5: a booking changed since the confirmation makes it stale', async () => {
    const seed = await seedTenant(api);
    const ref = await trainConfirmation(api, seed);
    // The desk re-terms the booking: same id, different bound term.
    await api.pool.query(`update bookings set term_end = term_end + interval '1 day' where booking_id = $1`, [seed.bookingId]);
    const r = await refused(seed, trainBody(seed, ref), seed.requester, 'k-stale', 'eligibility_stale');
    expect(r.body.error.message).toBe(`booking ${seed.bookingId} changed since the confirmation was requested; request a new confirmation`);
  });

  it('gate 6: data policy, checkpoint storage, budget and incremental cost (confirmation intact)', async () => {
    // Confirmations are requested under a permissive policy; the operator then narrows it, so gate 6 is what refuses.
    const seed = await seedTenant(api);
    const cases: Array<[string, Record<string, unknown>]> = [
      ['data_policy_violation', { allowed_licenses: ['mit'] }],
      ['checkpoint_storage_invalid', { checkpoint_storage: { schemes: ['gs'], prefixes: [] } }],
    ];
    for (const [code, policy] of cases) {
      const ref = await trainConfirmation(api, seed);
      await api.admin.setTenantPolicy({ tenantId: seed.tenant.tenant_id, policy });
      await refused(seed, trainBody(seed, ref), seed.requester, `k-g6-${code}`, code);
      await api.admin.setTenantPolicy({ tenantId: seed.tenant.tenant_id, policy: { allowed_licenses: ['proprietary-owned', 'cc-by-4.0'], checkpoint_storage: { schemes: ['s3'], prefixes: [] } } });
      const c = await api.call('GET', `/v1/confirmations/${ref}`, { key: seed.requester });
      expect(c.body.data.status).toBe('approved');
    }
  });

  it('budget and incremental ceilings refuse at request time, before an approver is asked', async () => {
    const seed = await seedTenant(api);
    for (const [code, m] of [
      ['budget_exceeded', mutate((x) => (x.budget.ceiling_usd = 10))],
      ['incremental_cost_exceeded', mutate((x) => (x.budget.max_incremental_cost_usd = 0))],
    ] as const) {
      const before = await footprint(api);
      const r = await api.call('POST', '/v1/confirmations', {
        key: seed.requester,
        body: { action: 'train.create', booking_id: seed.bookingId, manifest: m, manifest_digest: manifestDigest(m) },
      });
      expect(r.body.error.code).toBe(code);
      expect(await footprint(api)).toEqual(before);
      expect((await api.pool.query('select count(*)::int as n from confirmations where manifest_digest = $1', [manifestDigest(m)])).rows[0].n).toBe(0);
    }
  });

  it('gate 6: a plan that cannot finish inside the term is capacity_insufficient', async () => {
    const seed = await seedTenant(api);
    const ref = await trainConfirmation(api, seed);
    await api.pool.query(`update bookings set term_end = now() + interval '2 hours' where booking_id = $1`, [seed.bookingId]);
    // The eligibility snapshot changed too, so strip it to test the capacity gate on its own.
    await api.pool.query(`update confirmations set details = details - 'eligibility' where ref = $1`, [ref]);
    await refused(seed, trainBody(seed, ref), seed.requester, 'k-cap', 'capacity_insufficient');
  });

  it('a plan refusal answers only for the cost mismatch it caused: any other mismatch is still a mismatch', async () => {
    const seed = await seedTenant(api);
    const ref = await trainConfirmation(api, seed);
    await api.pool.query(`update bookings set term_end = now() + interval '2 hours' where booking_id = $1`, [seed.bookingId]);
    await api.pool.query(`update confirmations set details = details - 'eligibility' where ref = $1`, [ref]);
    // Another manifest under the same reference: its digest differs as well as the cost the refused plan left unknown.
    const other = mutate((m) => (m.name = 'another-run'));
    const r = await refused(seed, trainBody(seed, ref, other), seed.requester, 'k-cap-other', 'confirmation_mismatch');
    expect(r.body.error.details.fields).toEqual(['manifest_digest', 'cost_usd']);
  });

  it('a cost that moved since approval is a mismatch on the cost alone', async () => {
    const seed = await seedTenant(api);
    const ref = await trainConfirmation(api, seed);
    // As if the estimate the approver saw were a dollar off what the plan now says.
    await api.pool.query(`update confirmations set cost_usd = cost_usd + 1 where ref = $1`, [ref]);
    const r = await refused(seed, trainBody(seed, ref), seed.requester, 'k-cost-moved', 'confirmation_mismatch');
    expect(r.body.error.details.fields).toEqual(['cost_usd']);
  });
});

describe('POST /v1/runs — concurrency', () => {
  it('50 simultaneous requests with one key create exactly one run', async () => {
    const seed = await seedTenant(api);
    const ref = await trainConfirmation(api, seed);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, ref), headers: { 'idempotency-key': 'one-key-50' } })),
    );
    const created = results.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    for (const r of results) {
      if (r.status === 201) continue;
      // Either a replay of the same run, or told the first is still in flight.
      if (r.body.ok) expect(r.body.data.run_id).toBe(created[0]!.body.data.run_id);
      else expect(r.body.error.code).toBe('idempotency_in_progress');
    }
    const runs = await api.pool.query('select run_id from runs where tenant_id = $1', [seed.tenant.tenant_id]);
    expect(runs.rowCount).toBe(1);
  });

  it('50 simultaneous uses of one confirmation with different keys consume it once', async () => {
    const seed = await seedTenant(api);
    const ref = await trainConfirmation(api, seed);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, ref), headers: { 'idempotency-key': `many-keys-${i}` } })),
    );
    const created = results.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 201)) expect(r.body.error.code).toBe('confirmation_consumed');
    const runs = await api.pool.query('select run_id from runs where tenant_id = $1', [seed.tenant.tenant_id]);
    expect(runs.rowCount).toBe(1);
    const consumed = await api.pool.query(`select data, metadata from events where type = 'ConfirmationConsumed' and stream_id = $1`, [`confirmation-${ref}`]);
    expect(consumed.rowCount).toBe(1);
    // The consumption names the run it was consumed for, and who consumed it: the same actor that reserved the run.
    const runId = created[0]!.body.data.run_id as string;
    expect(consumed.rows[0].data).toEqual({ ref, consumed_for: runId });
    const reserved = await api.pool.query(`select metadata from events where type = 'RunReserved' and stream_id = $1`, [`run-${runId}`]);
    expect(consumed.rows[0].metadata.actor).toEqual(expect.any(String));
    expect(consumed.rows[0].metadata.actor).toBe(reserved.rows[0].metadata.actor);
  });

  it('a request in flight makes a second with the same key answer idempotency_in_progress', async () => {
    const seed = await seedTenant(api);
    const ref = await trainConfirmation(api, seed);
    const holding = api.ledger.transaction(async (tx) => {
      const claim = await tx.idempotency.begin(seed.tenant.tenant_id, 'held-key', 'some-fingerprint');
      expect(claim.kind).toBe('new');
      const r = await api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, ref), headers: { 'idempotency-key': 'held-key' } });
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe('idempotency_in_progress');
      throw new Error('roll back the held claim');
    });
    await expect(holding).rejects.toThrow('roll back the held claim');
    const after = await api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, ref), headers: { 'idempotency-key': 'held-key' } });
    expect(after.status).toBe(201);
  });
});
