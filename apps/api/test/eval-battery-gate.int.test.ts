import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestDigest } from '@ito/contracts';
import { EXAMPLE_MANIFEST, footprint, seedTenant, startApi, type Api } from '../../../test/support/api.js';

let api: Api;
beforeAll(async () => {
  api = await startApi();
});
afterAll(async () => {
  await api?.close();
});

function naming(battery: string): string {
  const m = JSON.parse(EXAMPLE_MANIFEST);
  m.eval.battery = battery;
  for (const d of m.data) d.decontamination.eval_suite = battery;
  return JSON.stringify(m, null, 2);
}

async function request(seed: Awaited<ReturnType<typeof seedTenant>>, manifest: string, route = '/v1/confirmations') {
  return api.call('POST', route, {
    key: seed.requester,
    body: { action: 'train.create', booking_id: seed.bookingId, manifest, manifest_digest: manifestDigest(manifest) },
  });
}

/** The confirmation request refuses a manifest whose eval battery is not registered: never an approver asked, then data prep failing. */
describe('the eval battery is registered before a run is confirmed', () => {
  it('refuses an unregistered battery with eval_battery_not_registered at $.eval.battery, not repeating the name, leaving nothing behind', async () => {
    const seed = await seedTenant(api);
    const before = await footprint(api);
    const r = await request(seed, naming('planted-name-xyz/v9'));
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.body.error.code).toBe('eval_battery_not_registered');
    expect(r.body.error.details).toMatchObject({ path: '$.eval.battery' });
    expect(JSON.stringify(r.body)).not.toContain('planted-name-xyz');
    expect(await footprint(api)).toEqual(before);
  });

  it('confirms once the battery is registered (the shipped one, and one the operator adds)', async () => {
    const seed = await seedTenant(api);
    expect((await request(seed, EXAMPLE_MANIFEST)).status).toBe(201);
    await api.batteries.register('acme-evals/v2', Buffer.from('{"id":"a-1","task":"mmlu","text":"a question of its own"}\n'));
    const r = await request(seed, naming('acme-evals/v2'));
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  });
});
