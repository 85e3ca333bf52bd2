import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { CHAOS_MANIFEST, startCluster, type Cluster, eventsOfType as of } from './support/cluster.js';

let cluster: Cluster | null = null;
let pool: pg.Pool | null = null;
let holder: pg.PoolClient | null = null;
afterEach(async () => {
  holder?.release(true);
  holder = null;
  await pool?.end();
  pool = null;
  await cluster?.stop();
  cluster = null;
});


/** Backends of this database blocked on the lock of a run's row (a run change waits for it). */
const runLockWaiters = async (p: pg.Pool): Promise<number[]> =>
  (
    await p.query<{ pid: number }>(
      "select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike '%from runs where%for update%'",
    )
  ).rows.map((r) => r.pid);

const until = async <T>(what: string, probe: () => Promise<T | null | undefined | false>, ms = 30_000): Promise<T> => {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    const hit = await probe();
    if (hit) return hit;
  }
  throw new Error(`${what} did not happen within ${ms} ms`);
};

interface JobRow {
  id: string;
  state: string;
  stalled_count: number;
  attempts_started: number;
}

describe('chaos: the worker is killed (SIGKILL) in the middle of a stage job', () => {
  it('another worker takes the stalled job once its claim lapses, and the stage is recorded once', async () => {
    // No worker yet: the run waits for its first stage job until the test holds the run's row.
    cluster = await startCluster({ nodes: 2, intervalS: 1, timeScale: 16_000, servers: [['api'], ['monitor']], serverEnv: { ITO_JOB_LOCK_S: '2' } });
    const c = cluster;
    pool = new pg.Pool({ connectionString: c.db.url, max: 2 });
    const run = await c.submitRun();

    // The test holds the run's row, so the data-prep stage job blocks inside its first write: mid-job, its claim
    // on the queue held and renewed by the worker that took it.
    holder = await pool.connect();
    await holder.query('begin');
    await holder.query('select 1 from runs where run_id = $1 for update', [run]);
    const first = await c.startServer(['worker']);
    const [blocked] = await until('the stage job to block on the run', async () => {
      const w = await runLockWaiters(pool!);
      return w.length > 0 && w;
    });

    await first.kill9();
    const killedAt = Date.now();
    // A second worker: its stalled-job check finds the lapsed claim and runs the job again, which blocks too.
    const second = await c.startServer(['worker']);
    await until('the redelivered job to block on the run', async () => (await runLockWaiters(pool!)).some((pid) => pid !== blocked));
    const redeliveredAfterS = (Date.now() - killedAt) / 1000;
    await holder.query('rollback');
    holder.release();
    holder = null;

    const events = await c.waitFor(run, 'the run to end', (e) => e.some((x) => ['RunSucceeded', 'RunFailed'].includes(x.type)) && e, 150_000);
    expect(of(events, 'RunSucceeded'), c.tails()).toHaveLength(1);
    expect(await c.ledgerFindings(run)).toEqual([]);
    // The stage the killed worker was in the middle of: started once, checked once, completed once.
    expect(of(events, 'StageStarted', 'data_prep')).toHaveLength(1);
    expect(of(events, 'StageCompleted', 'data_prep')).toHaveLength(1);
    expect(of(events, 'DataRefChecked')).toHaveLength(JSON.parse(CHAOS_MANIFEST).data.length);

    // The queue's own record: one data-prep job, taken back from the dead worker once, then completed.
    const jobs = (
      await pool.query<JobRow>(
        "select id, state::text, stalled_count, attempts_started from ito_queue.job where name = 'stage.start' and data->>'run_id' = $1 and data->>'stage' = 'data_prep'",
        [run],
      )
    ).rows;
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ state: 'completed', stalled_count: 1, attempts_started: 2 });
    // Handed over within about twice the 2 s claim (lapse, then the next check), with slack for a loaded machine.
    expect(redeliveredAfterS).toBeLessThan(12);
    expect(second.output()).toContain('workers started');
  }, 240_000);
});
