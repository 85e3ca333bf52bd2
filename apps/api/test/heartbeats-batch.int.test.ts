import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSecret, revokeNodeCredential } from '@ito/runs';
import { seedTenant, startApi, type Api, type Seed } from '../../../test/support/api.js';
import { heldSteady } from '../../../test/support/lock-waiters.js';

/**
 * `POST /v1/agent/heartbeats`: the beats of several nodes of one agent host in one request, each authenticated
 * by its own node credential. A beat whose credential is unknown or revoked is refused alone, in its place; a
 * malformed, oversize or duplicated batch is refused whole and writes nothing; a batch that does not fit in what
 * the process holds is shed whole with 429 and Retry-After, counted in beats.
 */
let api: Api;
let seed: Seed;
let node = 0;
beforeAll(async () => {
  api = await startApi({ heartbeatAdmission: { inFlight: 4 }, authFailureLimit: { max: 24, timeWindowMs: 60_000 } });
  seed = await seedTenant(api);
});
afterAll(async () => api?.close());

const gpus = [{ index: 0, healthy: true, temperature_c: 61 }];
const register = async (n: number) => {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await api.admin.registerNode({ bookingId: seed.bookingId, name: `host-${String(++node).padStart(3, '0')}` }));
  return out;
};
const batch = (carrier: string, beats: unknown[]) => api.call('POST', '/v1/agent/heartbeats', { key: carrier, body: { beats } });
const beatOf = (credential: string, extra: Record<string, unknown> = {}) => ({ credential, tasks: [], gpus, ...extra });
const liveness = async () =>
  (await api.pool.query<{ node_id: string; health: unknown }>('select node_id, health::json as health from node_liveness order by node_id')).rows;
const livenessOf = async (ids: string[]) => (await liveness()).filter((r) => ids.includes(r.node_id));

describe('batched heartbeats', () => {
  it("records every node's beat of a batch, answers each in order with its own node, and counts them as ingested beats", async () => {
    const nodes = await register(3);
    const answer = await batch(nodes[0]!.node_credential, nodes.map((n) => beatOf(n.node_credential)));
    expect(answer.status).toBe(200);
    expect(answer.body.data.interval_s).toBeGreaterThan(0);
    expect(answer.body.data.beats).toEqual(nodes.map((n) => ({ ok: true, node_id: n.node_id, stop: [], directives: [] })));
    const rows = await livenessOf(nodes.map((n) => n.node_id));
    expect(rows.map((r) => r.node_id)).toEqual(nodes.map((n) => n.node_id).sort());
    for (const r of rows) expect(r.health).toEqual(gpus);
    expect(await (await fetch(`${api.url}/metrics`)).text()).toMatch(/ito_heartbeats_ingested_total 3\b/);
  });

  it('stores each beat’s GPU list as the text its agent sent (layout and number spelling kept; single route too), or serialised when the text cannot be cut with certainty', async () => {
    const nodes = await register(3);
    const sent = [{ index: 0, healthy: true, memory_used_gb: 70.1 }];
    const text = JSON.stringify({ beats: nodes.map((n) => beatOf(n.node_credential, { gpus: sent })) }, null, 1).replaceAll('70.1', '7.01E1');
    // The last beat's key spelt with an escape: the lists are then serialised from what was parsed, not cut.
    const escaped = text.replace(/"gpus"(?![\s\S]*"gpus")/, '"gp\\u0075s"');
    for (const [body, stored] of [[text, '[\n    {\n     "index": 0,\n     "healthy": true,\n     "memory_used_gb": 7.01E1\n    }\n   ]'], [escaped, JSON.stringify(sent)]] as const) {
      const r = await fetch(`${api.url}/v1/agent/heartbeats`, { method: 'POST', headers: { authorization: `Bearer ${nodes[0]!.node_credential}`, 'content-type': 'application/json' }, body });
      expect(r.status).toBe(200);
      const { rows } = await api.pool.query<{ text: string; health: unknown }>('select health as text, health::json as health from node_liveness where node_id = any($1)', [nodes.map((n) => n.node_id)]);
      expect(rows.map((row) => [row.text, row.health])).toEqual(nodes.map(() => [stored, sent]));
    }
    // The single route keeps its one list's text the same way.
    const single = JSON.stringify({ tasks: [], gpus: sent }).replace('70.1', '7.01E1');
    const r = await fetch(`${api.url}/v1/agent/heartbeat`, { method: 'POST', headers: { authorization: `Bearer ${nodes[0]!.node_credential}`, 'content-type': 'application/json' }, body: single });
    expect(r.status).toBe(200);
    const { rows } = await api.pool.query<{ text: string }>('select health as text from node_liveness where node_id = $1', [nodes[0]!.node_id]);
    expect(rows[0]?.text).toBe('[{"index":0,"healthy":true,"memory_used_gb":7.01E1}]');
  });

  it('reads the beats’ credentials the cache does not hold in one statement for the batch, not one each', async () => {
    const nodes = await register(4);
    const names: string[] = [];
    const query = api.pool.query.bind(api.pool);
    api.pool.query = ((config: unknown, ...rest: unknown[]) => {
      const name = (config as { name?: string } | null)?.name;
      if (name?.startsWith('ito_node')) names.push(name);
      return (query as (...a: unknown[]) => unknown)(config, ...rest);
    }) as typeof api.pool.query;
    try {
      const answer = await batch(nodes[0]!.node_credential, nodes.map((n) => beatOf(n.node_credential)));
      expect(answer.body.data.beats.map((b: { node_id: string }) => b.node_id)).toEqual(nodes.map((n) => n.node_id));
    } finally {
      api.pool.query = query;
    }
    // The carrier's header is authenticated (and cached) first; its own beat then hits the cache.
    expect(names).toEqual(['ito_node_by_credential_hash', 'ito_nodes_by_credential_hashes']);
  });

  it('answers a beat that names a task its node does not run with that task to stop, as the single route does', async () => {
    const [a, b] = await register(2);
    const task = { task_id: `tsk_${'0'.repeat(32)}`, attempt: 1, step: 5 };
    const answer = await batch(a!.node_credential, [beatOf(a!.node_credential), beatOf(b!.node_credential, { tasks: [task] })]);
    expect(answer.body.data.beats[0]).toEqual({ ok: true, node_id: a!.node_id, stop: [], directives: [] });
    expect(answer.body.data.beats[1]).toEqual({ ok: true, node_id: b!.node_id, stop: [{ task_id: task.task_id, reason: 'no such task on this node' }], directives: [] });
  });

  it('refuses a revoked or unknown credential’s beat alone, in its place, and records the others', async () => {
    const [carrier, good, revoked] = await register(3);
    // Cached first, so the refusal proves the revocation reached the cache, not only the database.
    expect((await batch(carrier!.node_credential, [beatOf(revoked!.node_credential)])).status).toBe(200);
    await api.pool.query('delete from node_liveness where node_id = $1', [revoked!.node_id]);
    await revokeNodeCredential(api.pool, revoked!.node_id, new Date());
    const unknown = newSecret('nc');
    let answer = await batch(carrier!.node_credential, [beatOf(good!.node_credential), beatOf(revoked!.node_credential), beatOf(unknown)]);
    for (let i = 0; i < 40 && answer.body.data?.beats[1]?.ok === true; i++) {
      await new Promise((r) => setTimeout(r, 25));
      await api.pool.query('delete from node_liveness where node_id = $1', [revoked!.node_id]);
      answer = await batch(carrier!.node_credential, [beatOf(good!.node_credential), beatOf(revoked!.node_credential), beatOf(unknown)]);
    }
    expect(answer.status).toBe(200);
    expect(answer.body.data.beats).toEqual([
      { ok: true, node_id: good!.node_id, stop: [], directives: [] },
      { ok: false, error: { code: 'credential_revoked', message: 'this node credential was revoked' } },
      { ok: false, error: { code: 'unauthenticated', message: 'unknown credential' } },
    ]);
    expect((await livenessOf([good!.node_id, revoked!.node_id])).map((r) => r.node_id)).toEqual([good!.node_id]);
    expect(JSON.stringify(answer.body)).not.toContain(unknown.slice(7, 20));
    // No credential of a batch reaches the server's log, refused or not.
    for (const secret of [good!.node_credential, revoked!.node_credential, unknown]) expect(api.logLines.join('')).not.toContain(secret.slice(7));
    // The carrier's own credential is the request's: a revoked one refuses the whole request, writing nothing.
    const whole = await batch(revoked!.node_credential, [beatOf(good!.node_credential)]);
    expect([whole.status, whole.body.error.code]).toEqual([401, 'credential_revoked']);
  });

  it('refuses an oversize, duplicated or malformed batch whole with validation_failed, writing nothing and echoing no credential', async () => {
    const nodes = await register(2);
    const [a, b] = nodes;
    const before = await liveness();
    const many = Array.from({ length: 65 }, () => beatOf(newSecret('nc')));
    const keyLike = newSecret('sk');
    const cases: unknown[][] = [
      many,
      [],
      [beatOf(a!.node_credential), beatOf(b!.node_credential), beatOf(a!.node_credential)],
      [beatOf(a!.node_credential), { credential: b!.node_credential, tasks: [] }],
      [beatOf(a!.node_credential), beatOf(b!.node_credential, { extra: 1 })],
      [beatOf(a!.node_credential), beatOf(keyLike)],
      [beatOf(a!.node_credential), beatOf(`${b!.node_credential}x`)],
      [beatOf(a!.node_credential), beatOf(b!.node_credential, { gpus: Array.from({ length: 65 }, (_, index) => ({ index: index % 64, healthy: true })) })],
    ];
    for (const beats of cases) {
      const r = await batch(a!.node_credential, beats);
      expect([r.status, r.body.error?.code]).toEqual([400, 'validation_failed']);
      for (const secret of [a!.node_credential, b!.node_credential, keyLike]) expect(JSON.stringify(r.body)).not.toContain(secret.slice(7));
    }
    const notAnArray = await api.call('POST', '/v1/agent/heartbeats', { key: a!.node_credential, body: { beats: 'all of them' } });
    expect([notAnArray.status, notAnArray.body.error.code]).toEqual([400, 'validation_failed']);
    expect(await liveness()).toEqual(before);
    // A tenant's key is not a node credential: the route is the agents'.
    const byKey = await batch(seed.requester, [beatOf(a!.node_credential)]);
    expect([byKey.status, byKey.body.error.code]).toEqual([403, 'forbidden']);
    expect(await liveness()).toEqual(before);
  });

  it('admits beats, not requests: a batch that does not fit is shed whole with 429 and Retry-After and writes nothing', async () => {
    const nodes = await register(6);
    const ids = nodes.map((n) => n.node_id);
    const holder = new pg.Client({ connectionString: api.databaseUrl });
    await holder.connect();
    let first: Awaited<ReturnType<typeof batch>>;
    let single: Awaited<ReturnType<typeof batch>>;
    try {
      await holder.query('begin');
      await holder.query('lock table node_liveness in exclusive mode');
      // Three beats in flight of the four the process holds: a batch of two does not fit, one single beat does.
      const held = batch(nodes[0]!.node_credential, nodes.slice(0, 3).map((n) => beatOf(n.node_credential)));
      await heldSteady(api.pool);
      const shed = await batch(nodes[3]!.node_credential, nodes.slice(3, 5).map((n) => beatOf(n.node_credential)));
      expect([shed.status, shed.body.error.code, shed.body.error.retryable]).toEqual([429, 'rate_limited', true]);
      expect(shed.headers.get('retry-after')).toBe('1');
      const one = batch(nodes[5]!.node_credential, [beatOf(nodes[5]!.node_credential)]);
      await heldSteady(api.pool);
      const full = await api.call('POST', '/v1/agent/heartbeat', { key: nodes[4]!.node_credential, body: { tasks: [], gpus } });
      expect(full.status).toBe(429);
      await holder.query('commit');
      [first, single] = await Promise.all([held, one]);
    } finally {
      await holder.end();
    }
    expect([first.status, single.status]).toEqual([200, 200]);
    expect((await livenessOf(ids)).map((r) => r.node_id)).toEqual([...ids.slice(0, 3), ids[5]!].sort());
    // The beats are free again: the shed batch is admitted on its next interval.
    expect((await batch(nodes[3]!.node_credential, nodes.slice(3, 5).map((n) => beatOf(n.node_credential)))).status).toBe(200);
    expect((await livenessOf(ids)).map((r) => r.node_id)).toEqual([...ids].sort());
  });

  // Last: it spends this address's budget of failed authentications for the rest of the window.
  it('counts every refused beat against the address’s failed-authentication budget, as single heartbeats would be', async () => {
    const [carrier] = await register(1);
    // Batches of four unknown credentials (all this process admits at once): 24 refused beats spend the budget.
    let batches = 0;
    for (; batches < 6; batches++) {
      const r = await batch(carrier!.node_credential, Array.from({ length: 4 }, () => beatOf(newSecret('nc'))));
      if (r.status !== 200) break;
      expect(r.body.data.beats.every((b: { ok: boolean }) => !b.ok)).toBe(true);
    }
    expect(batches).toBeGreaterThan(0);
    const before = await liveness();
    const next = await batch(carrier!.node_credential, [beatOf(carrier!.node_credential)]);
    expect([next.status, next.body.error.code]).toEqual([429, 'rate_limited']);
    expect(Number(next.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await liveness()).toEqual(before);
  });
});
