import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_MANIFEST, footprint, leaked, seedTenant, startApi, trainBody, trainConfirmation, type Api, type Seed } from '../../../test/support/api.js';

/**
 * Hostile request bodies, ids, headers and floods: every answer is the envelope with a contract code, nothing
 * is left behind, and nothing of what was sent comes back in an answer or a log line.
 */
let api: Api;
let seed: Seed;
beforeAll(async () => {
  api = await startApi({ authFailureLimit: { max: 1000, timeWindowMs: 60_000 } });
  seed = await seedTenant(api);
});
afterAll(async () => api.close());

const PLANTED = 'zqxjvkwzqxjvkwpfmb';
const TOKEN_LIKE = 'ito_sk_' + 'Qm9ZbW9ZbW9ZbW9ZbW9ZbW9ZbW9ZbW9ZbW9ZbW9ZbW9';

/** A raw body sent as is, so duplicates and broken JSON reach the server exactly as written. */
async function raw(method: string, path: string, body: string, headers: Record<string, string> = {}) {
  const r = await fetch(`${api.url}${path}`, { method, headers: { authorization: `Bearer ${seed.requester}`, 'content-type': 'application/json', ...headers }, body });
  const text = await r.text();
  return { status: r.status, text, body: JSON.parse(text) };
}

/** Checks the refusal: envelope and code, nothing stored, nothing planted in the answer or the new log lines. */
async function expectRefused(run: () => Promise<{ status: number; text?: string; body: any }>, code: string, planted: string | null = PLANTED) {
  const before = await footprint(api);
  const logsBefore = api.logLines.length;
  const r = await run();
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ ok: false, live_api_contacted: true, notice: null, error: { code } });
  expect(await footprint(api)).toEqual(before);
  if (planted) expect(leaked(planted, [r.text ?? JSON.stringify(r.body), ...api.logLines.slice(logsBefore)]), [r.text ?? JSON.stringify(r.body), ...api.logLines.slice(logsBefore)].join('\n')).toEqual([]);
  return r;
}

describe('request bodies: one meaning, nothing echoed, on every route', () => {
  const confirmBody = () => ({ action: 'train.create', booking_id: seed.bookingId, manifest: EXAMPLE_MANIFEST, manifest_digest: 'sha256:' + '0'.repeat(64) });

  it('a duplicate key in a body is refused, naming the path by the schema names only', async () => {
    const dup = JSON.stringify(confirmBody()).replace('"action":"train.create"', '"action":"train.create","action":"run.cancel"');
    const r = await expectRefused(() => raw('POST', '/v1/confirmations', dup), 'validation_failed');
    expect(r.body.error.details).toEqual({ path: '$.action', reason: 'duplicate_key' });
    const inTrain = JSON.stringify(trainBody(seed, `cfm_${'1'.repeat(32)}`)).replace('{"booking_id"', '{"booking_id":"bkg_x","booking_id"');
    await expectRefused(() => raw('POST', '/v1/runs', inTrain, { 'idempotency-key': 'dup-body-1' }), 'validation_failed');
  });

  it('prototype keys in a body are refused, on a route with a body and on one without', async () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const body = `{"${key}": {"booking_id": "${PLANTED}"}, "booking_id": "${seed.bookingId}", "manifest": "{}"}`;
      const r = await expectRefused(() => raw('POST', '/v1/plans', body), 'validation_failed');
      expect(r.body.error.details.reason).toBe('forbidden_key');
    }
    await expectRefused(() => raw('POST', `/v1/confirmations/cfm_${'2'.repeat(32)}/approve`, '{"__proto__": {"x": 1}}'), 'validation_failed');
  });

  it('an unknown body key is reported by position, never by name', async () => {
    const r = await expectRefused(() => raw('POST', '/v1/plans', JSON.stringify({ booking_id: seed.bookingId, manifest: '{}', [PLANTED]: 1 })), 'validation_failed');
    expect(r.body.error.details.issues[0].path).toBe('$["<key #3>"]');
    await expectRefused(() => raw('POST', '/v1/bookings/' + seed.bookingId + '/eligibility', JSON.stringify({ expect: { [PLANTED]: 'x' } })), 'validation_failed');
  });

  it('broken JSON is refused by line and column, never quoting it', async () => {
    for (const body of [`{"booking_id": ${PLANTED}}`, `{'${PLANTED}': 1}`, `{"a": "${PLANTED}",}`, `{"a": 1} ${PLANTED}`, `["${PLANTED}\u0001"]`]) {
      const r = await expectRefused(() => raw('POST', '/v1/plans', body), 'validation_failed');
      expect(r.body.error.message).toMatch(/at line \d+, column \d+/);
    }
  });

  it('nesting past the limit, and U+0000, are refused', async () => {
    await expectRefused(() => raw('POST', '/v1/plans', `{"booking_id": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`), 'validation_failed', null);
    await expectRefused(() => raw('POST', '/v1/plans', `{"booking_id": "bkg_\\u0000", "manifest": "{}"}`), 'validation_failed', null);
    const manifestWithNul = JSON.stringify({ booking_id: seed.bookingId, manifest: `${EXAMPLE_MANIFEST}\u0000` });
    await expectRefused(() => raw('POST', '/v1/plans', manifestWithNul), 'validation_failed', null);
  });

  it('ids and digests in bodies are checked for shape before any query, and never echoed', async () => {
    for (const booking_id of [PLANTED + '"', `${PLANTED} ${PLANTED}`, 'bkg_é' + PLANTED, 'x'.repeat(129)]) {
      await expectRefused(() => raw('POST', '/v1/plans', JSON.stringify({ booking_id, manifest: EXAMPLE_MANIFEST })), 'validation_failed');
    }
    await expectRefused(() => raw('POST', '/v1/plans', JSON.stringify({ booking_id: seed.bookingId, manifest: EXAMPLE_MANIFEST, manifest_digest: PLANTED })), 'validation_failed');
    // Well formed but unknown: simply not found, as before.
    await expectRefused(() => raw('POST', '/v1/plans', JSON.stringify({ booking_id: PLANTED, manifest: EXAMPLE_MANIFEST })), 'booking_not_found', null);
  });
});

describe('ids from the path', () => {
  it.each([
    ['a NUL byte', `/v1/runs/run_%00${PLANTED}`, 'not_found'],
    ['a quote and spaces', `/v1/runs/${PLANTED}%22%20or%201=1`, 'not_found'],
    ['non-ASCII', `/v1/runs/run_%C3%A9${PLANTED}`, 'not_found'],
    ['101 to 128 characters', `/v1/runs/${PLANTED}${'a'.repeat(100)}`, 'not_found'],
    ['a credential pasted as an id', `/v1/runs/${TOKEN_LIKE}`, 'not_found'],
    ['a malformed booking id', `/v1/bookings/${PLANTED}%00`, 'booking_not_found'],
    ['a malformed confirmation ref', `/v1/confirmations/%00${PLANTED}`, 'confirmation_not_found'],
    ['a long confirmation ref to approve', `/v1/confirmations/${'c'.repeat(120)}${PLANTED}/approve`, 'not_found'],
  ])('%s is not found, in the envelope, without echo and without a database error', async (_label, path, code) => {
    const planted = path.includes(TOKEN_LIKE) ? TOKEN_LIKE : PLANTED;
    const method = path.endsWith('/approve') ? 'POST' : 'GET';
    const key = path.endsWith('/approve') ? seed.approver : seed.requester;
    const r = await expectRefused(() => api.call(method, path, { key }).then((x) => ({ ...x, text: JSON.stringify(x.body) })), code, planted);
    expect(r.status).toBe(404);
    expect(api.logLines.some((l) => /"level":50/.test(l))).toBe(false);
  });

  it('access logs carry the route pattern and validated ids, never the raw path or query', async () => {
    const logsBefore = api.logLines.length;
    const runId = `run_${'a'.repeat(32)}`;
    await api.call('GET', `/v1/runs/${runId}?token=${TOKEN_LIKE}&${PLANTED}=1`, { key: seed.requester });
    await api.call('GET', `/v1/nothing/${TOKEN_LIKE}/${PLANTED}`, { key: seed.requester });
    const lines = api.logLines.slice(logsBefore);
    expect(lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request completed')).toEqual([
      expect.objectContaining({ method: 'GET', route: '/v1/runs/:id', ids: { id: runId }, status: 404 }),
      expect.objectContaining({ method: 'GET', route: null, ids: {}, status: 404 }),
    ]);
    expect(leaked(TOKEN_LIKE, lines)).toEqual([]);
    expect(leaked(PLANTED, lines)).toEqual([]);
  });

  it('a query value holding U+0000 is refused before it reaches the database', async () => {
    await expectRefused(() => api.call('GET', `/v1/runs?idempotency_key=${PLANTED}%00`, { key: seed.requester }).then((x) => ({ ...x, text: JSON.stringify(x.body) })), 'validation_failed');
  });
});

/** A raw HTTP/1.1 exchange on a socket, for what Node's parser refuses before Fastify sees it. */
function rawHttp(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const { port } = new URL(api.url);
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(text));
    let out = '';
    socket.on('data', (d) => (out += d));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

function bodyOf(response: string): any {
  return JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));
}

describe("every answer is the envelope, the framework's own included", () => {
  it('oversized headers: 431 in the envelope', async () => {
    const response = await rawHttp(`GET /v1/bookings HTTP/1.1\r\nHost: x\r\nX-Big: ${PLANTED.repeat(2000)}\r\n\r\n`);
    expect(response).toMatch(/^HTTP\/1.1 431 /);
    expect(bodyOf(response)).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
    expect(leaked(PLANTED, [response])).toEqual([]);
  });

  it('malformed header lines and request lines: 400 in the envelope', async () => {
    for (const text of [`GET /v1/bookings HTTP/1.1\r\nHost: x\r\n${PLANTED}\r\n\r\n`, `${PLANTED} / HTTP/1.1\r\n\r\n`, `GET /v1/bookings HTTP/1.1\r\nHost: x\r\nX-A: a\u0000${PLANTED}\r\n\r\n`]) {
      const response = await rawHttp(text);
      expect(response).toMatch(/^HTTP\/1.1 400 /);
      expect(bodyOf(response)).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
      expect(leaked(PLANTED, [response])).toEqual([]);
    }
  });

  it('a path that is not valid percent-encoding: 400 in the envelope', async () => {
    const r = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(`${api.url}/v1/runs/%E0%A4%A${PLANTED}`, { headers: { authorization: `Bearer ${seed.requester}` } }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
    expect(leaked(PLANTED, [r.text])).toEqual([]);
  });

  it('unknown routes, other media types and oversized bodies: the envelope, no echo', async () => {
    const unknown = await api.call('GET', `/v1/${PLANTED}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(leaked(PLANTED, [JSON.stringify(unknown.body)])).toEqual([]);
    const text = await fetch(`${api.url}/v1/plans`, { method: 'POST', headers: { authorization: `Bearer ${seed.requester}`, 'content-type': 'text/plain' }, body: PLANTED });
    expect(text.status).toBe(415);
    expect(await text.json()).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
    const empty = await raw('POST', '/v1/plans', '');
    expect(empty.body).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
  });
});

describe('self-approval is refused', () => {
  it('the credential that requested a confirmation can neither approve nor deny it', async () => {
    const both = await api.admin.createKey({ tenantId: seed.tenant.tenant_id, scopes: ['runs:write', 'runs:read', 'confirmations:approve'], principal: 'lead@acme' });
    const ref = (await api.call('POST', '/v1/confirmations', { key: both.key, body: trainConfirmationBody() })).body.data.confirmation_ref;
    for (const decision of ['approve', 'deny']) {
      const r = await expectRefused(() => api.call('POST', `/v1/confirmations/${ref}/${decision}`, { key: both.key }).then((x) => ({ ...x, text: '' })), 'forbidden', null);
      expect(r.status).toBe(403);
    }
    const shown = await api.call('GET', `/v1/confirmations/${ref}`, { key: both.key });
    expect(shown.body.data).toMatchObject({ status: 'pending', requested_by: both.key_id, decided_by: null });
    const ok = await api.call('POST', `/v1/confirmations/${ref}/approve`, { key: seed.approver });
    expect(ok.body.data).toMatchObject({ status: 'approved', requested_by: both.key_id, decided_by: seed.tenant.approver_key_id });
  });

  it('where keys name a principal, another key of the same principal cannot decide either', async () => {
    const tenantId = seed.tenant.tenant_id;
    const asker = await api.admin.createKey({ tenantId, scopes: ['runs:write'], principal: 'ml-team@acme' });
    const samePrincipal = await api.admin.createKey({ tenantId, scopes: ['confirmations:approve'], principal: 'ml-team@acme' });
    const other = await api.admin.createKey({ tenantId, scopes: ['confirmations:approve'], principal: 'finance@acme' });
    const ref = (await api.call('POST', '/v1/confirmations', { key: asker.key, body: trainConfirmationBody() })).body.data.confirmation_ref;
    await expectRefused(() => api.call('POST', `/v1/confirmations/${ref}/approve`, { key: samePrincipal.key }).then((x) => ({ ...x, text: '' })), 'forbidden', null);
    const ok = await api.call('POST', `/v1/confirmations/${ref}/approve`, { key: other.key });
    expect(ok.body.data).toMatchObject({ status: 'approved', requested_by_principal: 'ml-team@acme', decided_by: other.key_id, decided_by_principal: 'finance@acme' });
    await expect(api.admin.createTenant({ name: 'x', requesterPrincipal: 'ops@x', approverPrincipal: 'ops@x' })).rejects.toMatchObject({ code: 'validation_failed' });
  });
});

describe('requester ≠ approver always has two names to compare', () => {
  it('key creation refuses a key that can request or approve without a principal, and leaves nothing', async () => {
    const count = async () => (await api.pool.query<{ n: string }>('select (select count(*) from api_keys) + (select count(*) from tenants) + (select count(*) from events) as n')).rows[0]!.n;
    const before = await count();
    await expect(api.admin.createTenant({ name: 'anon' })).rejects.toMatchObject({ code: 'validation_failed', message: expect.stringMatching(/--requester-principal/) });
    await expect(api.admin.createTenant({ name: 'anon', requesterPrincipal: 'ml@anon' })).rejects.toMatchObject({ code: 'validation_failed', message: expect.stringMatching(/--approver-principal/) });
    for (const scopes of [['runs:write'], ['confirmations:approve'], ['admin'], ['runs:read', 'runs:write']]) {
      await expect(api.admin.createKey({ tenantId: seed.tenant.tenant_id, scopes })).rejects.toMatchObject({ code: 'validation_failed', message: expect.stringMatching(/--principal/) });
    }
    expect(await count()).toBe(before);
    // A key that can do neither may still be unnamed.
    expect((await api.admin.createKey({ tenantId: seed.tenant.tenant_id, scopes: ['runs:read', 'audit:read'] })).principal).toBeNull();
  });

  it('an existing key that names no principal can neither request nor decide, and nothing is recorded', async () => {
    const tenantId = seed.tenant.tenant_id;
    const asker = await api.admin.createKey({ tenantId, scopes: ['runs:write'], principal: 'old-asker@acme' });
    const approver = await api.admin.createKey({ tenantId, scopes: ['confirmations:approve'], principal: 'old-approver@acme' });
    const ref = (await api.call('POST', '/v1/confirmations', { key: asker.key, body: trainConfirmationBody() })).body.data.confirmation_ref;
    // Keys made before principals were required: the same keys with their names taken away.
    await api.pool.query('update api_keys set principal = null where key_id = any($1)', [[asker.key_id, approver.key_id]]);
    const before = await footprint(api);
    const request = await api.call('POST', '/v1/confirmations', { key: asker.key, body: trainConfirmationBody() });
    expect(request.status).toBe(403);
    expect(request.body.error).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/names no principal/) });
    for (const decision of ['approve', 'deny']) {
      const decided = await api.call('POST', `/v1/confirmations/${ref}/${decision}`, { key: approver.key });
      expect(decided.status).toBe(403);
      expect(decided.body.error.code).toBe('forbidden');
    }
    expect(await footprint(api)).toEqual(before);
    expect((await api.call('GET', `/v1/confirmations/${ref}`, { key: asker.key })).body.data).toMatchObject({ status: 'pending', decided_by: null });
    // A pending request from a key that named no one cannot be decided by a named approver either.
    const unnamedRef = await (async () => {
      await api.pool.query('update api_keys set principal = $2 where key_id = $1', [asker.key_id, 'old-asker@acme']);
      const r = (await api.call('POST', '/v1/confirmations', { key: asker.key, body: trainConfirmationBody() })).body.data.confirmation_ref as string;
      await api.pool.query('update confirmations set requested_by_principal = null where ref = $1', [r]);
      return r;
    })();
    const named = await api.call('POST', `/v1/confirmations/${unnamedRef}/approve`, { key: seed.approver });
    expect(named.body.error).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/names no principal/) });
  });
});

function trainConfirmationBody() {
  return { action: 'train.create', booking_id: seed.bookingId, manifest: EXAMPLE_MANIFEST, manifest_digest: trainBody(seed, 'x').manifest_digest };
}

describe('the approver sees what they approve', () => {
  it('GET /v1/confirmations/:ref shows the manifest summary with its digest, from the stored bytes', async () => {
    const ref = await trainConfirmation(api, seed, EXAMPLE_MANIFEST, { approve: false });
    const d = (await api.call('GET', `/v1/confirmations/${ref}`, { key: seed.approver })).body.data;
    const m = JSON.parse(EXAMPLE_MANIFEST);
    expect(d.manifest).toMatchObject({
      manifest_digest: d.manifest_digest,
      model: { family: 'llama', parameters: '8B', revision: m.model.revision },
      checkpoint: { storage: m.checkpoint.storage, keep_last: 3 },
      budget: { ceiling_usd: 60000, max_incremental_cost_usd: 4000 },
      eval: { battery: 'ito-evals/v1', gates: m.eval.gates },
      target: { curriculum: m.target.curriculum },
      post_training: { recipe: m.post_training.recipe },
    });
    expect(d.manifest.data).toEqual(m.data.map((s: any) => expect.objectContaining({ ref: s.ref, sha256: s.sha256, license: s.license, tokens: s.tokens })));
  });

  it('an expired confirmation reads expired, never approved or pending', async () => {
    const pending = await trainConfirmation(api, seed, EXAMPLE_MANIFEST, { approve: false });
    const approved = await trainConfirmation(api, seed);
    api.clock.offsetMs = 11 * 60 * 1000;
    try {
      for (const ref of [pending, approved]) expect((await api.call('GET', `/v1/confirmations/${ref}`, { key: seed.requester })).body.data.status).toBe('expired');
    } finally {
      api.clock.offsetMs = 0;
    }
    expect((await api.call('GET', `/v1/confirmations/${approved}`, { key: seed.requester })).body.data.status).toBe('approved');
  });
});
