import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateDatabase } from '@ito/ledger';
import { startCluster, type Cluster, eventsOfType as of } from './support/cluster.js';
import { startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from './support/private-services.js';

let cluster: Cluster | null = null;
let postgres: PrivatePostgres | null = null;
let redis: PrivateRedis | null = null;
afterEach(async () => {
  await cluster?.stop();
  await postgres?.stop();
  await redis?.stop();
  cluster = null;
  postgres = null;
  redis = null;
});


describe('chaos: PostgreSQL and Redis (private instances of this test) are restarted mid-training', () => {
  it('every process reconnects and carries on: no node declared lost, nothing lost or recorded twice, the run succeeds', async () => {
    postgres = await startPrivatePostgres();
    redis = await startPrivateRedis();
    await migrateDatabase(postgres.url);
    cluster = await startCluster({
      nodes: 2,
      spares: 1,
      intervalS: 1,
      timeScale: 16_000,
      database: { url: postgres.url, name: 'postgres', drop: async () => undefined },
      redisUrl: redis.url,
    });
    const c = cluster;
    const run = await c.submitRun();
    await c.waitFor(run, 'a pretrain checkpoint', (e) => e.some((x) => x.type === 'CheckpointSaved' && x.data.stage === 'pretrain'));

    // Both stores go away at once for longer than the misses (3 × 1 s), under the agents' reports and heartbeats,
    // the workers' queue reads and the monitor's sweeps; then come back on the same ports with their data.
    const restartAt = Date.now();
    await Promise.all([postgres.restart(4_000), redis.restart(2_000)]);

    const events = await c.waitFor(run, 'the run to end', (e) => e.some((x) => ['RunSucceeded', 'RunFailed'].includes(x.type)) && e, 150_000);
    expect(of(events, 'RunSucceeded'), c.tails()).toHaveLength(1);
    expect(await c.ledgerFindings(run)).toEqual([]);
    // The monitor judged its own gap, not the agents: nobody was declared lost or hung.
    expect(of(events, 'NodeLost')).toEqual([]);
    expect(of(events, 'TaskHung')).toEqual([]);
    // The outage was real: PostgreSQL started again after the checkpoint, and the processes met the closed stores.
    const pool = new pg.Pool({ connectionString: postgres.url, max: 1 });
    const started = (await pool.query<{ at: Date }>('select pg_postmaster_start_time() as at')).rows[0]!.at;
    await pool.end();
    expect(started.getTime()).toBeGreaterThanOrEqual(restartAt);
    const outputs = [...c.servers, ...c.agents.values()].map((p) => p.output()).join('\n');
    expect(outputs).toMatch(/terminating connection|ECONNREFUSED|Connection is closed|did not answer|could not reach/i);
  }, 240_000);
});
