import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type Cluster, eventsOfType as of } from './support/cluster.js';
import { startPausableProxy } from './support/pausable-proxy.js';
import { waitReady } from './support/processes.js';

let cluster: Cluster | null = null;
let proxy: Awaited<ReturnType<typeof startPausableProxy>> | null = null;
let pool: pg.Pool | null = null;
afterEach(async () => {
  await proxy?.close();
  await pool?.end();
  await cluster?.stop();
  proxy = null;
  pool = null;
  cluster = null;
});


describe('chaos: the API is killed (SIGKILL) after it took a train request and before its answer reached the client', () => {
  it('the client, its connection broken, sends the same request with the same idempotency key and finds the one run', async () => {
    cluster = await startCluster({ nodes: 2, spares: 0, intervalS: 1, timeScale: 16_000, servers: [['api'], ['worker'], ['monitor']] });
    const c = cluster;
    pool = new pg.Pool({ connectionString: c.db.url, max: 1 });
    proxy = await startPausableProxy(Number(new URL(c.url).port));
    const body = await c.approvedTrain();
    const headers = { authorization: `Bearer ${c.tenant.requester_key}`, 'content-type': 'application/json', 'idempotency-key': 'chaos-api-kill' };

    // The answer is held in the proxy: the API commits the run, the client never hears of it.
    proxy.pauseResponses();
    const first = fetch(`http://127.0.0.1:${proxy.port}/v1/runs`, { method: 'POST', headers, body: JSON.stringify(body) }).then(
      (r) => ({ status: r.status }),
      (err: Error) => ({ error: err.message }),
    );
    let created: string | undefined;
    for (const deadline = Date.now() + 20_000; !created && Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
      created = (await pool.query<{ run_id: string }>('select run_id from runs where tenant_id = $1', [c.tenant.tenant_id])).rows[0]?.run_id;
    }
    expect(created, c.tails()).toBeDefined();
    await c.servers[0]!.kill9();
    // The client's connection breaks without an answer.
    expect(await first).toHaveProperty('error');

    const restarted = await c.startServer(['api'], 0);
    await waitReady(c.url, restarted);
    const retry = await c.call('POST', '/v1/runs', body, c.tenant.requester_key, { 'idempotency-key': 'chaos-api-kill' });
    expect(retry.status, JSON.stringify(retry.body)).toBeLessThan(300);
    expect(retry.body.data.run_id).toBe(created);
    // A third send, on a fresh API, answers the same run again.
    expect((await c.call('POST', '/v1/runs', body, c.tenant.requester_key, { 'idempotency-key': 'chaos-api-kill' })).body.data.run_id).toBe(created);

    const events = await c.waitFor(created!, 'the run to end', (e) => e.some((x) => ['RunSucceeded', 'RunFailed'].includes(x.type)) && e, 150_000);
    expect(of(events, 'RunSucceeded'), c.tails()).toHaveLength(1);
    // One run: the ledger check counts the tenant's run streams and runs rows.
    expect(await c.ledgerFindings(created!)).toEqual([]);
    expect(of(events, 'RunReserved')).toHaveLength(1);
  }, 240_000);
});
