import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type pg from 'pg';
import type { Logger } from '@ito/config';
import type { Ledger } from '@ito/ledger';
import { changeRun } from '@ito/runs';
import { decideNodeFailure, decideNodeRecovered, judgeNode, nextGraceFrom, type LivenessSettings, type NodeFailure } from '@ito/domain';
import { LeaseLost, assertLease, releaseLease, takeLease } from './lease.js';
import { observeActiveTasks, recoveredNodes, type ActiveTask } from './observations.js';
import { StageStepTimes } from './stage-step-times.js';

export const MONITOR_ROLE = 'monitor';
const ACTOR = 'monitor';

export interface MonitorOptions {
  pool: pg.Pool;
  /** The ledger with the API's inline projections (runs, tasks), as every writer of runs uses. */
  ledger: Ledger;
  logger: Logger;
  settings: LivenessSettings;
  /** Defaults: a lease of 3/4 of an interval, renewed (or tried for) every 1/4: a standby takes over within one. */
  tickMs?: number;
  leaseMs?: number;
  holder?: string;
}

export interface RunningMonitor {
  readonly holder: string;
  /** The fencing token while this monitor holds the lease, else null. */
  readonly token: number | null;
  stop(): Promise<void>;
}

/**
 * The SLO monitor: exactly one acts at a time, through a lease row with a fencing token. Each sweep reads every
 * active task's liveness on the database's clock, judges it (pure rules in @ito/domain), and records each
 * finding in its run's stream in a transaction that first checks the lease is still held with its token. It
 * trusts its view only one interval after it started holding the lease or after a gap in its own sweeps (the
 * database or the monitor was unreachable), so a pause of the control plane never declares the fleet lost.
 */
export function startMonitor(opts: MonitorOptions): RunningMonitor {
  const intervalMs = opts.settings.interval_s * 1000;
  const tickMs = opts.tickMs ?? Math.max(50, intervalMs / 4);
  const leaseMs = opts.leaseMs ?? Math.max(tickMs * 2, (intervalMs * 3) / 4);
  const holder = opts.holder ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const log = opts.logger.child({ role: 'monitor', holder });
  let token: number | null = null;
  let view: { last_sweep_at: Date | null; grace_from: Date | null } = { last_sweep_at: null, grace_from: null };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const stageStepTimes = new StageStepTimes();

  const tick = async () => {
    let lease;
    try {
      lease = await takeLease(opts.pool, MONITOR_ROLE, holder, leaseMs);
    } catch (err) {
      log.warn({ err: { message: (err as Error).message } }, 'monitor could not reach the database; its view is stale until it sweeps again');
      return;
    }
    if (!lease) {
      if (token !== null) log.warn({ token }, 'monitor lease taken over by another monitor; standing by');
      token = null;
      return;
    }
    if (lease.token !== token) {
      log.info({ token: lease.token }, 'monitor holds the lease');
      token = lease.token;
      view = { last_sweep_at: null, grace_from: null };
    }
    try {
      await sweep(lease.token);
    } catch (err) {
      if (err instanceof LeaseLost) {
        token = null;
        log.warn('monitor lost its lease during a sweep; its findings were not recorded');
        return;
      }
      log.warn({ err: { message: (err as Error).message } }, 'monitor sweep failed');
    }
  };

  const sweep = async (fence: number) => {
    const { now, tasks } = await observeActiveTasks(opts.pool);
    stageStepTimes.apply(tasks, now);
    const grace_from = nextGraceFrom(view, now, opts.settings);
    if (view.grace_from && grace_from !== view.grace_from) log.warn({ gap_s: (now.getTime() - view.last_sweep_at!.getTime()) / 1000 }, 'monitor resumed after a gap; agents get one interval to report');
    for (const t of tasks) {
      const verdict = judgeNode(t.observation, opts.settings, { now, grace_from });
      if (verdict.kind !== 'alive') await recordFailure(fence, t, { ...failureOf(t, now), verdict });
    }
    for (const r of await recoveredNodes(opts.pool)) {
      await opts.ledger.transaction(async (tx) => {
        await assertLease(tx.client, MONITOR_ROLE, holder, fence);
        if (r.run_id) {
          await changeRun(tx, r.tenant_id, r.run_id, (run) => ({ events: decideNodeRecovered(run.aggregate, r.node_id, r.last_heartbeat_at, r.lost_at), result: null }), { actor: ACTOR });
        }
        await tx.client.query('update nodes set lost_at = null, lost_run_id = null where node_id = $1 and lost_at = $2', [r.node_id, r.lost_at]);
      });
      log.info({ node_id: r.node_id, run_id: r.run_id }, 'node heard from again after it was declared lost');
    }
    view = { last_sweep_at: now, grace_from };
  };

  const recordFailure = async (fence: number, t: ActiveTask, failure: NodeFailure) => {
    const appended = await opts.ledger.transaction(async (tx) => {
      await assertLease(tx.client, MONITOR_ROLE, holder, fence);
      const { appended } = await changeRun(tx, t.tenant_id, t.run_id, (run) => ({ events: decideNodeFailure(run.aggregate, failure, opts.settings), result: null }), { actor: ACTOR });
      if (appended.length > 0 && failure.verdict.kind === 'lost') {
        await tx.client.query('update nodes set lost_at = $2, lost_run_id = $3 where node_id = $1', [t.observation.node_id, failure.detected_at, t.run_id]);
      }
      return appended;
    });
    if (appended.length > 0) log.warn({ run_id: t.run_id, node_id: t.observation.node_id, task_id: t.task_id, finding: failure.verdict.kind }, `node ${failure.verdict.kind}`);
  };

  const loop = () => {
    if (stopped) return;
    running = tick().finally(() => {
      if (!stopped) timer = setTimeout(loop, tickMs);
    });
  };
  loop();

  return {
    holder,
    get token() {
      return token;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      if (token !== null) await releaseLease(opts.pool, MONITOR_ROLE, holder).catch(() => undefined);
      token = null;
    },
  };
}

function failureOf(t: ActiveTask, now: Date): Omit<NodeFailure, 'verdict'> {
  return {
    node_id: t.observation.node_id,
    task_id: t.task_id,
    attempt: t.attempt,
    last_heartbeat_at: t.observation.last_heartbeat_at,
    step: t.observation.progress?.step ?? null,
    detected_at: now,
  };
}
