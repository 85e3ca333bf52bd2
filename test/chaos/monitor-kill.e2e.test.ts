import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type Cluster, eventsOfType as of } from './support/cluster.js';

let cluster: Cluster | null = null;
let pool: pg.Pool | null = null;
afterEach(async () => {
  await pool?.end();
  pool = null;
  await cluster?.stop();
  cluster = null;
});


interface LeaseRow {
  holder: string;
  token: number;
  renewed_at: Date;
  now: Date;
}

describe('chaos: the monitor holding the lease is killed (SIGKILL), a second monitor stands by', () => {
  it('the standby takes the lease within one interval, and a node lost afterwards is still detected and replaced', async () => {
    cluster = await startCluster({ nodes: 2, spares: 1, intervalS: 1, timeScale: 16_000, servers: [['api'], ['worker'], ['monitor'], ['monitor']] });
    const c = cluster;
    pool = new pg.Pool({ connectionString: c.db.url, max: 1 });
    const lease = async () => (await pool!.query<LeaseRow>("select holder, token, renewed_at, now() as now from role_leases where role = 'monitor'")).rows[0];
    const monitors = c.servers.slice(2);

    const run = await c.submitRun();
    await c.waitFor(run, 'a pretrain checkpoint', (e) => e.some((x) => x.type === 'CheckpointSaved' && x.data.stage === 'pretrain'));
    const before = (await lease())!;
    // The holder names its process: host:pid:random.
    const holderPid = Number(before.holder.split(':').at(-2));
    const holder = monitors.find((m) => m.child.pid === holderPid)!;
    expect(holder, `lease holder ${before.holder}`).toBeDefined();
    const standby = monitors.find((m) => m !== holder)!;

    await holder.kill9();
    const killedAt = (await lease())!.now;
    // Poll the lease row until the standby holds it.
    let after: LeaseRow | undefined;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 25))) {
      after = await lease();
      if (after && after.holder !== before.holder) break;
    }
    expect(after!.holder.split(':').at(-2)).toBe(String(standby.child.pid));
    expect(after!.token).toBe(before.token + 1);
    // Taken over within one interval of the death (the lease lasts 3/4 of an interval, tried every 1/4).
    const takeoverS = (after!.renewed_at.getTime() - killedAt.getTime()) / 1000;
    expect(takeoverS).toBeLessThanOrEqual(c.intervalS);

    // A later failure: the new monitor declares the killed agent's node lost, and the run goes on on the spare.
    const startedNow = of(await c.events(run), 'StageStarted').at(-1)!;
    const victimId = startedNow.data.tasks.find((t: any) => t.rank === 1).node_id as string;
    await c.agents.get([...c.nodeIds].find(([, id]) => id === victimId)![0])!.kill9();

    const events = await c.waitFor(run, 'the run to end', (e) => e.some((x) => ['RunSucceeded', 'RunFailed'].includes(x.type)) && e, 150_000);
    expect(of(events, 'RunSucceeded'), c.tails()).toHaveLength(1);
    expect(await c.ledgerFindings(run)).toEqual([]);
    const lost = of(events, 'NodeLost');
    expect(lost.map((e) => e.data.node_id)).toEqual([victimId]);
    // Recorded by the monitor that took over, after it did.
    expect(Date.parse(lost[0]!.data.detected_at)).toBeGreaterThan(after!.renewed_at.getTime());
    expect(standby.output()).toContain('monitor holds the lease');
    expect(of(events, 'RunResumed').find((e) => e.data.incident?.kind === 'node_lost')?.data.replaced_nodes).toEqual([victimId]);
  }, 240_000);
});
