import type pg from 'pg';
import type { NodeObservation } from '@ito/domain';

/** A node running an active task, as one sweep sees it. */
export interface ActiveTask {
  tenant_id: string;
  run_id: string;
  task_id: string;
  stage: string;
  attempt: number;
  observation: NodeObservation;
}

interface Row {
  tenant_id: string;
  run_id: string;
  task_id: string;
  stage: string;
  node_id: string;
  attempt: number;
  last_heartbeat_at: Date | null;
  step: number | null;
  progress_at: Date | null;
  step_s: number | null;
  planned_step_s: number | null;
  assigned_at: Date;
  kind: string;
  role: string;
  world_size: number;
  restore_bytes: number;
  /** A heartbeat of this attempt named a step, or a progress or checkpoint report of the task was recorded. */
  stepped: boolean;
}

/** Tasks whose trainer reports steps: the others (evaluations, ladder proxies, rollouts) have no first step to wait for. */
const STEPPING_KINDS = new Set(['train', 'post_train']);

/**
 * Every active task with its node's liveness, read in one statement with the database's clock: heartbeats,
 * progress (only when the heartbeats name this task's attempt), the plan's step time, and for a training task that
 * has reached no step yet what its start-up allowance is computed from.
 */
export async function observeActiveTasks(db: Pick<pg.Pool, 'query'>): Promise<{ now: Date; tasks: ActiveTask[] }> {
  const { rows } = await db.query<Row & { now: Date }>({
    name: 'ito_monitor_observe',
    text: `select now() as now, t.tenant_id, t.run_id, t.task_id, t.stage, t.node_id, t.attempt,
                  greatest(l.last_heartbeat_at, n.last_heartbeat_at) as last_heartbeat_at,
                  case when l.task_id = t.task_id and l.attempt = t.attempt then l.step end as step,
                  case when l.task_id = t.task_id and l.attempt = t.attempt then l.progress_at end as progress_at,
                  case when l.task_id = t.task_id and l.attempt = t.attempt then l.step_s end as step_s,
                  (t.spec->>'step_tokens')::float8 / nullif((t.spec->>'planned_tokens_per_s')::float8, 0) as planned_step_s,
                  t.created_at as assigned_at, t.spec->>'kind' as kind, t.role, coalesce((t.spec->>'world_size')::int, 1) as world_size,
                  case when jsonb_typeof(t.spec->'resume_from') = 'object' or jsonb_typeof(t.spec->'init_from') = 'object'
                       then coalesce((t.spec->'checkpoint'->>'modelled_bytes')::float8, 0) else 0 end as restore_bytes,
                  (t.last_seq > 0 or coalesce(l.task_id = t.task_id and l.attempt = t.attempt and l.progress_at is not null, false)) as stepped
           from tasks t join nodes n on n.node_id = t.node_id left join node_liveness l on l.node_id = t.node_id
           where t.status in ('assigned', 'running')`,
  });
  const now = rows[0]?.now ?? (await db.query<{ now: Date }>('select now() as now')).rows[0]!.now;
  return {
    now,
    tasks: rows.map((r) => ({
      tenant_id: r.tenant_id,
      run_id: r.run_id,
      task_id: r.task_id,
      stage: r.stage,
      attempt: r.attempt,
      observation: {
        node_id: r.node_id,
        last_heartbeat_at: r.last_heartbeat_at,
        progress: r.step !== null && r.progress_at !== null ? { step: r.step, progress_at: r.progress_at, step_s: r.step_s } : null,
        planned_step_s: r.planned_step_s,
        startup:
          STEPPING_KINDS.has(r.kind) && r.role === 'trainer' && !r.stepped
            ? { assigned_at: r.assigned_at, restore_bytes: Number(r.restore_bytes), world_size: r.world_size }
            : null,
      },
    })),
  };
}

/** Nodes declared lost whose heartbeats came back since. */
export async function recoveredNodes(db: Pick<pg.Pool, 'query'>): Promise<Array<{ node_id: string; tenant_id: string; run_id: string | null; lost_at: Date; last_heartbeat_at: Date }>> {
  const { rows } = await db.query({
    name: 'ito_monitor_recovered',
    text: `select n.node_id, n.tenant_id, n.lost_run_id as run_id, n.lost_at, l.last_heartbeat_at
           from nodes n join node_liveness l on l.node_id = n.node_id
           where n.lost_at is not null and l.last_heartbeat_at > n.lost_at`,
  });
  return rows;
}
