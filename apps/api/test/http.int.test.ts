import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedTenant, startApi, type Api } from '../../../test/support/api.js';

let api: Api;
beforeAll(async () => {
  api = await startApi({ rateLimit: { max: 5, timeWindowMs: 60_000 } });
});
afterAll(async () => api.close());

describe('HTTP edges', () => {
  it('serves an OpenAPI document built from the route schemas', async () => {
    const r = await api.call('GET', '/v1/openapi.json');
    expect(r.body.openapi).toBe('3.1.0');
    expect(Object.keys(r.body.paths)).toEqual(expect.arrayContaining(['/v1/runs', '/v1/runs/{id}/cancel', '/v1/confirmations/{ref}/approve', '/v1/plans']));
    const post = r.body.paths['/v1/runs'].post;
    const body = post.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(expect.arrayContaining(['booking_id', 'manifest', 'manifest_digest']));
    // Optional in shape, required by the gate: the document says what a missing one answers.
    expect(body.properties.confirmation_ref.description).toMatch(/confirmation_required \(428\)/);
    expect(post.parameters.some((p: any) => p.name === 'Idempotency-Key' && p.required)).toBe(true);
  });

  it('serves the manifest JSON Schema without a credential', async () => {
    const r = await api.call('GET', '/v1/schemas/manifest.json');
    expect(r.status).toBe(200);
    expect(r.body.additionalProperties).toBe(false);
    expect(r.body.properties.schema.const).toBe('ito.train.manifest/v1');
  });

  it('refuses a body over the limit with validation_failed', async () => {
    const seed = await seedTenant(api);
    const r = await api.call('POST', '/v1/plans', { key: seed.requester, body: { booking_id: seed.bookingId, manifest: 'x'.repeat(3 * 1024 * 1024) } });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe('validation_failed');
  });

  it('malformed JSON is validation_failed in the envelope', async () => {
    const seed = await seedTenant(api);
    const r = await fetch(`${api.url}/v1/plans`, { method: 'POST', headers: { authorization: `Bearer ${seed.approver}`, 'content-type': 'application/json' }, body: '{nope' });
    const body = await r.json();
    expect(body.ok).toBe(false);
    expect(body.error.code).toBe('validation_failed');
  });

  it('rate limits per credential with rate_limited and Retry-After, and echoes request ids', async () => {
    const seed = await seedTenant(api);
    const results = [];
    for (let i = 0; i < 7; i++) results.push(await api.call('GET', '/v1/bookings', { key: seed.requester, headers: { 'x-request-id': `rid-${i}` } }));
    const limited = results.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]!.body.error.code).toBe('rate_limited');
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(results[0]!.headers.get('x-request-id')).toBe('rid-0');
    // Another credential has its own budget.
    expect((await api.call('GET', '/v1/bookings', { key: seed.approver })).status).toBe(200);
  });

  it("a node's heartbeats and its other calls have separate allowances: a flood of one kind does not starve the other", async () => {
    const seed = await seedTenant(api);
    const gpus = [{ index: 0, healthy: true }];
    const agentCall = (key: string, method: string, path: string, body?: unknown) => api.call(method, `/v1/agent${path}`, { key, ...(body !== undefined ? { body } : {}) });
    const reporter = (await api.admin.registerNode({ bookingId: seed.bookingId, name: 'gpu-01' })).node_credential;
    const beater = (await api.admin.registerNode({ bookingId: seed.bookingId, name: 'gpu-02' })).node_credential;

    // Reports flood one node's budget (the task is not its own: refused, but counted all the same)...
    const reports = [];
    for (let i = 0; i < 7; i++) reports.push(await agentCall(reporter, 'POST', '/tasks/task_0000/progress', { attempt: 1, seq: i + 1, step: 1, tokens: 1 }));
    expect(reports.at(-1)!.status).toBe(429);
    // ...and its heartbeats still land.
    expect((await agentCall(reporter, 'POST', '/heartbeat', { tasks: [], gpus })).status).toBe(200);

    // Heartbeats flood the other node's heartbeat budget, and its other calls still land.
    const beats = [];
    for (let i = 0; i < 7; i++) beats.push(await agentCall(beater, 'POST', '/heartbeat', { tasks: [], gpus }));
    expect(beats.at(-1)!.status).toBe(429);
    expect(beats.at(-1)!.body.error.code).toBe('rate_limited');
    expect((await agentCall(beater, 'GET', '/assignments?wait_s=0')).status).toBe(200);
  });

  it('/metrics counts requests by route pattern and refusals by code, never raw ids', async () => {
    const seed = await seedTenant(api);
    await api.call('GET', `/v1/bookings/${seed.bookingId}`, { key: seed.approver });
    await api.call('GET', '/v1/bookings/bkg_does_not_exist', { key: seed.approver });
    const text = (await api.call('GET', '/metrics')).body as string;
    expect(text).toMatch(/ito_http_requests_total\{method="GET",route="\/v1\/bookings\/:id",status="200"\} [1-9]/);
    expect(text).toMatch(/ito_http_refusals_total\{route="\/v1\/bookings\/:id",code="booking_not_found"\} [1-9]/);
    expect(text).not.toContain(seed.bookingId);
  });

  it('unknown routes answer not_found in the envelope', async () => {
    const r = await api.call('GET', '/v1/nothing-here');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });
});
