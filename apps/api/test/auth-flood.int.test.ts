import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { footprint, leaked, seedTenant, startApi, type Api, type Seed } from '../../../test/support/api.js';

/** Floods of failed authentication, each bearer different: limited per client address, and cheap to refuse. */
let api: Api;
let seed: Seed;
beforeAll(async () => {
  api = await startApi({ authFailureLimit: { max: 5, timeWindowMs: 60_000 } });
  seed = await seedTenant(api);
});
afterAll(async () => api.close());

const wellFormedBogus = () => `ito_sk_${randomBytes(32).toString('base64url')}`;

describe('unauthenticated floods are limited per address', () => {
  it('a different bogus bearer each time is refused, then the address is limited with Retry-After, valid keys included', async () => {
    const before = await footprint(api);
    const logsBefore = api.logLines.length;
    const bearers = [wellFormedBogus(), 'not-a-credential-at-all', wellFormedBogus(), `ito_sk_${'x'.repeat(10)}`, wellFormedBogus()];
    for (const key of bearers) {
      const r = await api.call('GET', '/v1/bookings', { key });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('unauthenticated');
    }
    for (const key of [wellFormedBogus(), seed.requester]) {
      const r = await api.call('GET', '/v1/bookings', { key });
      expect(r.status).toBe(429);
      expect(r.body).toMatchObject({ ok: false, error: { code: 'rate_limited', retryable: true } });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    // Public routes stay open, and nothing was written by any of it.
    expect((await api.call('GET', '/healthz')).status).toBe(200);
    expect(await footprint(api)).toEqual(before);
    for (const key of bearers) expect(leaked(key, api.logLines.slice(logsBefore))).toEqual([]);
  });
});
