import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestDigest } from '@ito/contracts';
import { EXAMPLE_MANIFEST, footprint, seedTenant, startApi, type Api } from '../../../test/support/api.js';

let api: Api;
beforeAll(async () => {
  api = await startApi();
});
afterAll(async () => api.close());

describe('identity and credentials', () => {
  it('whoami names the tenant and scopes, never the key', async () => {
    const seed = await seedTenant(api);
    const r = await api.call('GET', '/v1/auth/whoami', { key: seed.requester });
    expect(r.body.data).toMatchObject({ tenant_id: seed.tenant.tenant_id, scopes: ['runs:read', 'runs:write'] });
    expect(JSON.stringify(r.body)).not.toContain(seed.requester);
  });

  it('no credential, a malformed one, an unknown one, and a revoked one each say so', async () => {
    const seed = await seedTenant(api);
    expect((await api.call('GET', '/v1/bookings')).body.error.code).toBe('unauthenticated');
    expect((await api.call('GET', '/v1/bookings', { headers: { authorization: 'Basic abc' } })).body.error.code).toBe('unauthenticated');
    expect((await api.call('GET', '/v1/bookings', { key: 'ito_sk_unknownunknownunknown' })).status).toBe(401);
    const logout = await api.call('POST', '/v1/auth/logout', { key: seed.requester });
    expect(logout.body.ok).toBe(true);
    const after = await api.call('GET', '/v1/bookings', { key: seed.requester });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('credential_revoked');
  });

  it('a requester key cannot approve', async () => {
    const seed = await seedTenant(api);
    const r = await api.call('POST', '/v1/confirmations', {
      key: seed.requester,
      body: { action: 'train.create', booking_id: seed.bookingId, manifest: EXAMPLE_MANIFEST, manifest_digest: manifestDigest(EXAMPLE_MANIFEST) },
    });
    const ref = r.body.data.confirmation_ref;
    const a = await api.call('POST', `/v1/confirmations/${ref}/approve`, { key: seed.requester });
    expect(a.status).toBe(403);
    expect(a.body.error.code).toBe('forbidden');
    expect((await api.call('GET', `/v1/confirmations/${ref}`, { key: seed.requester })).body.data.status).toBe('pending');
  });

  it('no key, token or credential ever appears in the logs', async () => {
    const seed = await seedTenant(api);
    await api.call('GET', '/v1/auth/whoami', { key: seed.requester });
    await api.call('GET', '/v1/bookings', { key: seed.approver });
    const logs = api.logLines.join('');
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(seed.requester);
    expect(logs).not.toContain(seed.approver);
    expect(logs).toContain('request_id');
  });
});

describe('bookings and eligibility', () => {
  it('lists and shows the tenant\'s bookings only', async () => {
    const a = await seedTenant(api);
    const b = await seedTenant(api);
    const list = await api.call('GET', '/v1/bookings', { key: a.requester });
    expect(list.body.data.bookings.map((x: any) => x.booking_id)).toEqual([a.bookingId]);
    expect((await api.call('GET', `/v1/bookings/${b.bookingId}`, { key: a.requester })).body.error.code).toBe('booking_not_found');
  });

  it('eligibility is bound to account, booking, topology, region, fabric and term, and creates nothing', async () => {
    const seed = await seedTenant(api);
    const before = await footprint(api);
    const r = await api.call('POST', `/v1/bookings/${seed.bookingId}/eligibility`, { key: seed.requester });
    expect(r.body.data).toMatchObject({
      booking_id: seed.bookingId,
      account_id: seed.tenant.tenant_id,
      topology: { gpu: 'h200', nodes: 2, gpus_per_node: 8 },
      region: 'us-east-1',
      fabric: 'infiniband',
    });
    expect(r.body.data.eligibility_id).toMatch(/^elg_/);
    expect(new Date(r.body.data.expires_at).getTime()).toBeGreaterThan(Date.now());
    expect(await footprint(api)).toEqual(before);
  });

  it('each unusable booking fails closed with its own code', async () => {
    for (const [status, code] of [
      ['expired', 'booking_expired'],
      ['revoked', 'booking_revoked'],
      ['released', 'booking_released'],
    ] as const) {
      const s = await seedTenant(api);
      await api.admin.setBookingStatus({ bookingId: s.bookingId, status });
      const before = await footprint(api);
      expect((await api.call('POST', `/v1/bookings/${s.bookingId}/eligibility`, { key: s.requester })).body.error.code).toBe(code);
      expect(await footprint(api)).toEqual(before);
    }
    const pending = await seedTenant(api, { status: 'pending' });
    expect((await api.call('POST', `/v1/bookings/${pending.bookingId}/eligibility`, { key: pending.requester })).body.error.code).toBe('booking_incomplete');
  });

  it('a stated expectation that differs is booking_mismatch; a stale eligibility is eligibility_stale', async () => {
    const seed = await seedTenant(api);
    const before = await footprint(api);
    const m = await api.call('POST', `/v1/bookings/${seed.bookingId}/eligibility`, { key: seed.requester, body: { expect: { gpu: 'h100' } } });
    expect(m.body.error.code).toBe('booking_mismatch');
    expect(await footprint(api)).toEqual(before);
    const e = await api.call('POST', `/v1/bookings/${seed.bookingId}/eligibility`, { key: seed.requester });
    await api.pool.query('update bookings set nodes = 1 where booking_id = $1', [seed.bookingId]);
    const ref = await api.call('POST', '/v1/runs', {
      key: seed.requester,
      headers: { 'idempotency-key': 'stale-elig' },
      body: { booking_id: seed.bookingId, manifest: EXAMPLE_MANIFEST, manifest_digest: manifestDigest(EXAMPLE_MANIFEST), confirmation_ref: 'cfm_x', eligibility_id: e.body.data.eligibility_id },
    });
    expect(ref.body.error.code).toBe('eligibility_stale');
    expect(await footprint(api)).toEqual(before);
  });
});

describe('plans', () => {
  it('POST /v1/plans answers the plan and its cost and creates nothing', async () => {
    const seed = await seedTenant(api);
    const before = await footprint(api);
    const confirmationsBefore = (await api.pool.query('select count(*)::int as n from confirmations')).rows[0].n;
    const r = await api.call('POST', '/v1/plans', { key: seed.requester, body: { booking_id: seed.bookingId, manifest: EXAMPLE_MANIFEST } });
    expect(r.body.ok).toBe(true);
    const d = r.body.data;
    expect(d.manifest_digest).toBe(manifestDigest(EXAMPLE_MANIFEST));
    expect(d.plan.tp * d.plan.pp * d.plan.dp * d.plan.cp).toBe(16);
    expect(d.plan.precision).toBe('fp8');
    expect(d.estimated_cost_usd).toBeGreaterThan(0);
    expect(d.estimated_cost_usd).toBeLessThanOrEqual(60000);
    expect(d.incremental_cost_usd).toBeLessThanOrEqual(4000);
    expect(d.estimated_hours).toBeGreaterThan(0);
    expect(await footprint(api)).toEqual(before);
    expect((await api.pool.query('select count(*)::int as n from confirmations')).rows[0].n).toBe(confirmationsBefore);
  });

  it('refuses a plan that cannot run, with the reason', async () => {
    const seed = await seedTenant(api, { gpu: 'a100', nodes: 1, gpus_per_node: 8, fabric: 'infiniband' });
    const m = JSON.parse(EXAMPLE_MANIFEST);
    m.model.parameters = '405B';
    const before = await footprint(api);
    const r = await api.call('POST', '/v1/plans', { key: seed.requester, body: { booking_id: seed.bookingId, manifest: JSON.stringify(m) } });
    expect(r.body.error.code).toBe('plan_refused');
    expect(await footprint(api)).toEqual(before);
    expect(r.body.error.message.length).toBeGreaterThan(10);
  });

  it('refuses RLVR that requires separate rollout nodes on a 1-node booking, before any confirmation is asked for', async () => {
    const seed = await seedTenant(api, { nodes: 1 });
    const m = JSON.parse(EXAMPLE_MANIFEST);
    m.post_training.recipe[2].separation = 'required';
    const manifest = JSON.stringify(m);
    const before = await footprint(api);
    const confirmationsBefore = (await api.pool.query('select count(*)::int as n from confirmations')).rows[0].n;
    const plan = await api.call('POST', '/v1/plans', { key: seed.requester, body: { booking_id: seed.bookingId, manifest } });
    expect(plan.body.error.code).toBe('plan_refused');
    expect(plan.body.error.message).toMatch(/separate nodes \(separation: required\) but the booking has 1 node/);
    const ask = await api.call('POST', '/v1/confirmations', {
      key: seed.requester,
      body: { action: 'train.create', booking_id: seed.bookingId, manifest, manifest_digest: manifestDigest(manifest) },
    });
    expect(ask.body.error.code).toBe('plan_refused');
    expect(await footprint(api)).toEqual(before);
    expect((await api.pool.query('select count(*)::int as n from confirmations')).rows[0].n).toBe(confirmationsBefore);
  });

  it('answers the post-training split of a 2-node booking', async () => {
    const seed = await seedTenant(api, { nodes: 2 });
    const r = await api.call('POST', '/v1/plans', { key: seed.requester, body: { booking_id: seed.bookingId, manifest: EXAMPLE_MANIFEST } });
    expect(r.body.data.plan.post_training.at(-1)).toEqual({ stage: 'rlvr', trainer_nodes: 1, rollout_nodes: 1, separated: true });
  });

  it('a multi-node plan on a slow fabric is fabric_unsupported', async () => {
    const seed = await seedTenant(api, { nodes: 8, fabric: 'ethernet' });
    const m = JSON.parse(EXAMPLE_MANIFEST);
    m.model.parameters = '70B';
    const before = await footprint(api);
    const r = await api.call('POST', '/v1/plans', { key: seed.requester, body: { booking_id: seed.bookingId, manifest: JSON.stringify(m) } });
    expect(r.body.error.code).toBe('fabric_unsupported');
    expect(await footprint(api)).toEqual(before);
  });
});

describe('confirmations', () => {
  it('a request is pending, bound, expiring in ten minutes, and approvable once', async () => {
    const seed = await seedTenant(api);
    const r = await api.call('POST', '/v1/confirmations', {
      key: seed.requester,
      body: { action: 'train.create', booking_id: seed.bookingId, manifest: EXAMPLE_MANIFEST, manifest_digest: manifestDigest(EXAMPLE_MANIFEST) },
    });
    expect(r.status).toBe(201);
    const d = r.body.data;
    expect(d).toMatchObject({ status: 'pending', action: 'train.create', booking_id: seed.bookingId, manifest_digest: manifestDigest(EXAMPLE_MANIFEST) });
    expect(d.cost_usd).toBeGreaterThan(0);
    // The approver sees the plan's incremental estimate beside the bound ceiling.
    expect(d.incremental_cost_usd).toBeGreaterThan(0);
    expect(d.incremental_cost_usd).toBeLessThanOrEqual(d.max_incremental_cost_usd);
    expect(d.estimated_hours).toBeGreaterThan(0);
    const ttl = new Date(d.expires_at).getTime() - Date.now();
    expect(ttl).toBeGreaterThan(9 * 60_000);
    expect(ttl).toBeLessThanOrEqual(10 * 60_000);
    expect((await api.call('POST', `/v1/confirmations/${d.confirmation_ref}/approve`, { key: seed.approver })).body.data.status).toBe('approved');
    const twice = await api.call('POST', `/v1/confirmations/${d.confirmation_ref}/deny`, { key: seed.approver });
    expect(twice.body.error.code).toBe('invalid_state');
  });

  it("another tenant's approver cannot see or decide it", async () => {
    const a = await seedTenant(api);
    const b = await seedTenant(api);
    const r = await api.call('POST', '/v1/confirmations', {
      key: a.requester,
      body: { action: 'train.create', booking_id: a.bookingId, manifest: EXAMPLE_MANIFEST, manifest_digest: manifestDigest(EXAMPLE_MANIFEST) },
    });
    const ref = r.body.data.confirmation_ref;
    expect((await api.call('GET', `/v1/confirmations/${ref}`, { key: b.approver })).body.error.code).toBe('confirmation_not_found');
    expect((await api.call('POST', `/v1/confirmations/${ref}/approve`, { key: b.approver })).body.error.code).toBe('confirmation_not_found');
  });

  it('a request for an unusable booking or a bad manifest creates no confirmation', async () => {
    const seed = await seedTenant(api);
    await api.admin.setBookingStatus({ bookingId: seed.bookingId, status: 'revoked' });
    const before = (await api.pool.query('select count(*)::int as n from confirmations')).rows[0].n;
    const r = await api.call('POST', '/v1/confirmations', {
      key: seed.requester,
      body: { action: 'train.create', booking_id: seed.bookingId, manifest: EXAMPLE_MANIFEST, manifest_digest: manifestDigest(EXAMPLE_MANIFEST) },
    });
    expect(r.body.error.code).toBe('booking_revoked');
    const bad = await api.call('POST', '/v1/confirmations', { key: seed.requester, body: { action: 'train.create', booking_id: seed.bookingId } });
    expect(bad.body.error.code).toBe('validation_failed');
    expect((await api.pool.query('select count(*)::int as n from confirmations')).rows[0].n).toBe(before);
  });
});
