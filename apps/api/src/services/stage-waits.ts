import { firstStepAllowance } from '@ito/domain';
import type { RunRow } from '@ito/runs';
import type { Resources } from '../resources.js';

interface StartingTask {
  node_name: string;
  waited_s: number;
  planned_step_s: number | null;
  world_size: number;
  restore_bytes: number;
}

/**
 * What the run's running stage waits for, in words `status` shows: each training task of the current attempt that
 * has reached no step yet, on which node, with the start-up allowance the monitor judges it on (the same rule and
 * the same facts: docs/pipeline.md, "Start-up allowance"). Null when it waits for nothing of the kind.
 */
export async function stageWaits(res: Resources, run: RunRow): Promise<string | null> {
  const current = run.aggregate.current;
  if (!current || current.status !== 'running') return null;
  const { rows } = await res.pool.query<StartingTask>({
    name: 'ito_stage_waits',
    text: `select n.name as node_name, extract(epoch from (now() - t.created_at))::float8 as waited_s,
                  (t.spec->>'step_tokens')::float8 / nullif((t.spec->>'planned_tokens_per_s')::float8, 0) as planned_step_s,
                  coalesce((t.spec->>'world_size')::int, 1) as world_size,
                  case when jsonb_typeof(t.spec->'resume_from') = 'object' or jsonb_typeof(t.spec->'init_from') = 'object'
                       then coalesce((t.spec->'checkpoint'->>'modelled_bytes')::float8, 0) else 0 end as restore_bytes
           from tasks t join nodes n on n.node_id = t.node_id left join node_liveness l on l.node_id = t.node_id
           where t.tenant_id = $1 and t.run_id = $2 and t.stage = $3 and t.attempt = $4
             and t.status in ('assigned', 'running') and t.role = 'trainer' and t.spec->>'kind' in ('train', 'post_train')
             and t.last_seq = 0 and not coalesce(l.task_id = t.task_id and l.attempt = t.attempt and l.progress_at is not null, false)
           order by t.rank`,
    values: [run.tenant_id, run.run_id, current.stage, current.attempt],
  });
  if (rows.length === 0) return null;
  const settings = {
    interval_s: res.agent.heartbeatIntervalS,
    misses: res.agent.heartbeatMisses,
    hang_factor: res.agent.hangFactor ?? 5,
    first_step_max_s: res.agent.firstStepMaxS ?? 300,
  };
  return rows
    .map((r) => {
      const allowance = firstStepAllowance({ restore_bytes: Number(r.restore_bytes), world_size: r.world_size }, r.planned_step_s, settings);
      return `first step on node ${r.node_name} (allowance ${allowance} s, ${Math.max(0, Math.floor(r.waited_s))} s so far)`;
    })
    .join('; ');
}
