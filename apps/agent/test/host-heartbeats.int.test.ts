import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentApi, ItoClient } from '@ito/client';
import { revokeNodeCredential } from '@ito/runs';
import { seedTenant, startApi, type Api, type Seed } from '../../../test/support/api.js';
import { HostHeartbeats } from '../src/host-heartbeats.js';

/**
 * The node agents of one process beat through one batched request: each gets exactly the answer a single
 * heartbeat would have given it, and a node whose credential the API refuses neither carries the batch again
 * nor keeps the others' beats from being recorded.
 */
let api: Api;
let seed: Seed;
beforeAll(async () => {
  api = await startApi();
  seed = await seedTenant(api);
});
afterAll(async () => api?.close());

const gpus = [{ index: 0, healthy: true }];
const batchRequests = async () => {
  const text = await (await fetch(`${api.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('ito_http_requests_total{') && l.includes('route="/v1/agent/heartbeats"'))
    .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
};
const singleRequests = async () => {
  const text = await (await fetch(`${api.url}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith('ito_http_requests_total{') && l.includes('route="/v1/agent/heartbeat"')).length;
};

async function nodes(names: string[]) {
  const out = [];
  for (const name of names) {
    const node = await api.admin.registerNode({ bookingId: seed.bookingId, name });
    out.push({ ...node, api: new AgentApi(new ItoClient({ baseUrl: api.url, credential: node.node_credential, timeoutMs: 10_000 })) });
  }
  return out;
}

describe('the heartbeats of a host', () => {
  it('sends the beats of its agents in one request and answers each agent with its own beat', async () => {
    const host = new HostHeartbeats();
    const [a, b, c] = await nodes(['h1-a', 'h1-b', 'h1-c']);
    const before = await batchRequests();
    const task = { task_id: `tsk_${'1'.repeat(32)}`, attempt: 1 };
    // As agents do: each takes its sender when it is made, before its first beat.
    const [sa, sb, sc] = [a!, b!, c!].map((n) => host.sender(n.node_credential, n.api));
    const answers = await Promise.all([sa!({ tasks: [], gpus }), sb!({ tasks: [task], gpus }), sc!({ tasks: [], gpus })]);
    expect(await batchRequests()).toBe(before + 1);
    expect(await singleRequests()).toBe(0);
    expect(answers.map((x) => x.ok)).toEqual([true, true, true]);
    expect(answers.map((x) => (x.ok ? x.data.stop : null))).toEqual([[], [{ task_id: task.task_id, reason: 'no such task on this node' }], []]);
    for (const x of answers) if (x.ok) expect(x.data.interval_s).toBeGreaterThan(0);
    const { rows } = await api.pool.query<{ node_id: string }>('select node_id from node_liveness where node_id = any($1) order by node_id', [[a!.node_id, b!.node_id, c!.node_id]]);
    expect(rows.map((r) => r.node_id)).toEqual([a!.node_id, b!.node_id, c!.node_id].sort());
  });

  it('gathers beats that arrive apart into one request, and stops waiting for an agent that no longer beats', async () => {
    const host = new HostHeartbeats({ windowMs: 1_500 });
    const [a, b, c] = await nodes(['h3-a', 'h3-b', 'h3-c']);
    const senders = new Map([a!, b!, c!].map((n) => [n, host.sender(n.node_credential, n.api)]));
    const beat = (n: typeof a) => senders.get(n!)!({ tasks: [], gpus });
    const before = await batchRequests();
    // Three agents whose timers fire 60 ms apart: one request, sent when the last beat is in, not at the window's end.
    const t0 = Date.now();
    const first = [beat(a)];
    await new Promise((r) => setTimeout(r, 60));
    first.push(beat(b));
    await new Promise((r) => setTimeout(r, 60));
    first.push(beat(c));
    expect((await Promise.all(first)).every((x) => x.ok)).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1_400);
    expect(await batchRequests()).toBe(before + 1);
    // c stops beating: the next two batches wait the window for it, then batches go without it at once.
    const timed = async () => {
      const t = Date.now();
      expect((await Promise.all([beat(a), beat(b)])).every((x) => x.ok)).toBe(true);
      return Date.now() - t;
    };
    expect(await timed()).toBeGreaterThanOrEqual(1_400);
    expect(await timed()).toBeGreaterThanOrEqual(1_400);
    expect(await timed()).toBeLessThan(1_000);
    expect(await batchRequests()).toBe(before + 4);
  });

  it('answers a revoked node with its refusal, has the next node carry the batch, and records the others', async () => {
    const host = new HostHeartbeats();
    const [a, b] = await nodes(['h2-a', 'h2-b']);
    await revokeNodeCredential(api.pool, a!.node_id, new Date());
    const [sa, sb] = [a!, b!].map((n) => host.sender(n.node_credential, n.api));
    const round = () => Promise.all([sa!({ tasks: [], gpus }), sb!({ tasks: [], gpus })]);
    const before = await batchRequests();
    const [refused, recorded] = await round();
    expect(refused.ok ? null : refused.error.code).toBe('credential_revoked');
    expect(recorded.ok).toBe(true);
    // The revoked carrier's request, then the same batch carried by the next node.
    expect(await batchRequests()).toBe(before + 2);
    const [again, still] = await round();
    expect([again.ok ? null : again.error.code, still.ok]).toEqual(['credential_revoked', true]);
    expect(await batchRequests()).toBe(before + 3);
    const { rows } = await api.pool.query<{ node_id: string }>('select node_id from node_liveness where node_id = any($1)', [[a!.node_id, b!.node_id]]);
    expect(rows.map((r) => r.node_id)).toEqual([b!.node_id]);
  });
});
