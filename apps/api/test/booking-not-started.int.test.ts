import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_MANIFEST, footprint, seedTenant, startApi, trainBody, trainConfirmation, type Api } from '../../../test/support/api.js';
import { manifestDigest } from '@ito/contracts';

/** A booking's entitlement is bound to its term: before it begins, every gate that reads the booking refuses. */
describe('a booking whose term has not begun', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => api.close());

  const future = () => ({ term_start: new Date(Date.now() + 3600_000).toISOString(), term_end: new Date(Date.now() + 30 * 86400_000).toISOString() });

  async function refusedWithNothingLeft(call: () => Promise<{ status: number; body: any }>) {
    const before = await footprint(api);
    const r = await call();
    expect(r.status, JSON.stringify(r.body)).toBe(409);
    expect(r.body.error.code).toBe('booking_not_started');
    expect(r.body.error.message).toMatch(/starts at \d{4}-\d{2}-\d{2}T/);
    expect(await footprint(api)).toEqual(before);
  }

  it('is refused by plan, eligibility and confirmation request, which leave nothing behind', async () => {
    const seed = await seedTenant(api, future());
    await refusedWithNothingLeft(() => api.call('POST', '/v1/plans', { key: seed.requester, body: { booking_id: seed.bookingId, manifest: EXAMPLE_MANIFEST } }));
    await refusedWithNothingLeft(() => api.call('POST', `/v1/bookings/${seed.bookingId}/eligibility`, { key: seed.requester }));
    await refusedWithNothingLeft(() =>
      api.call('POST', '/v1/confirmations', {
        key: seed.requester,
        body: { action: 'train.create', booking_id: seed.bookingId, manifest: EXAMPLE_MANIFEST, manifest_digest: manifestDigest(EXAMPLE_MANIFEST) },
      }),
    );
  });

  it('is refused by train even with a confirmation approved inside the term', async () => {
    const seed = await seedTenant(api, future());
    // The confirmation is asked for and approved two hours on (inside the term), then train comes back to now.
    api.clock.offsetMs = 2 * 3600_000;
    let ref: string;
    try {
      ref = await trainConfirmation(api, seed);
    } finally {
      api.clock.offsetMs = 0;
    }
    await refusedWithNothingLeft(() => api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, ref), headers: { 'idempotency-key': 'not-started-1' } }));
  });
});
