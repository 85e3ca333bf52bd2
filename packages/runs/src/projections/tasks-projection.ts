import type pg from 'pg';
import type { RunEventMap } from '@ito/domain';
import type { InlineProjection, StoredEventOf } from '@ito/ledger';

/** The channel a long-polling agent's API process listens on; the payload is the node id with new or withdrawn work. */
export const ASSIGNMENTS_CHANNEL = 'ito_assignments';

const TASK_EVENT_TYPES = [
  'StageStarted',
  'ProgressRecorded',
  'CheckpointSaved',
  'TaskCompleted',
  'TaskFailed',
  'TaskStopped',
  'TasksWithdrawn',
  'RunCancelled',
  'RunFailed',
  'RunSucceeded',
  'EvalGateFailed',
  'BudgetExhausted',
] as const;

/** The run events that change a node's tasks. */
type TaskEvents = Pick<RunEventMap, (typeof TASK_EVENT_TYPES)[number]>;

const ENDS_RUN = new Set<string>(['RunCancelled', 'RunFailed', 'RunSucceeded', 'EvalGateFailed', 'BudgetExhausted']);

/**
 * The tasks table, kept in the append transaction (an agent must see a task as soon as its StageStarted
 * commits, and never after it was withdrawn). Each change wakes the affected node's long poll through
 * NOTIFY, which PostgreSQL delivers only if the transaction commits.
 */
export const tasksProjection: InlineProjection<TaskEvents> & { reset(client: pg.PoolClient): Promise<void> } = {
  name: 'tasks',
  handles: [...TASK_EVENT_TYPES],
  async apply(client, events) {
    const woken = new Set<string>();
    for (const e of events) for (const node of await applyOne(client, e)) woken.add(node);
    if (woken.size > 0) {
      await client.query({ name: 'ito_tasks_notify', text: 'select pg_notify($1, n) from unnest($2::text[]) as n', values: [ASSIGNMENTS_CHANNEL, [...woken]] });
    }
  },
  async reset(client) {
    await client.query('delete from tasks');
  },
};

/** Applies one event; returns the nodes whose assignments changed. */
async function applyOne(client: pg.PoolClient, e: StoredEventOf<TaskEvents>): Promise<string[]> {
  const runId = e.data.run_id;
  if (!runId) return [];
  if (e.type === 'StageStarted') {
    const d = e.data;
    if (!d.tasks || !d.spec) return [];
    // One statement for every task of the attempt; the booking comes from the run's row, written first.
    await client.query({
      name: 'ito_tasks_insert',
      text: `insert into tasks (task_id, tenant_id, run_id, booking_id, node_id, stage, attempt, rank, role, status, last_seq, spec, created_at, updated_at)
             select t.task_id, $1, r.run_id, r.booking_id, t.node_id, $3, $4, t.rank, t.role, 'assigned', 0, $5::jsonb || jsonb_build_object('rank', t.rank, 'role', t.role), $6, $6
             from runs r, jsonb_to_recordset($7::jsonb) as t(task_id text, node_id text, rank int, role text)
             where r.run_id = $2
             on conflict (task_id) do nothing`,
      values: [e.tenantId, runId, d.stage, d.attempt ?? 1, JSON.stringify(d.spec), e.recordedAt, JSON.stringify(d.tasks)],
    });
    return d.tasks.map((t) => t.node_id);
  }
  if (e.type === 'TasksWithdrawn') {
    const d = e.data;
    const { rows } = await client.query<{ node_id: string }>(
      `update tasks set status = 'withdrawn', updated_at = $2 where task_id = any($1::text[]) and status in ('assigned', 'running') returning node_id`,
      [d.task_ids, e.recordedAt],
    );
    return rows.map((r) => r.node_id);
  }
  if (ENDS_RUN.has(e.type)) {
    const { rows } = await client.query<{ node_id: string }>(
      `update tasks set status = 'withdrawn', updated_at = $2 where run_id = $1 and status in ('assigned', 'running') returning node_id`,
      [runId, e.recordedAt],
    );
    return rows.map((r) => r.node_id);
  }
  const d = e.data as { task_id?: string; seq?: number };
  if (!d.task_id) return [];
  const status = e.type === 'TaskCompleted' ? 'completed' : e.type === 'TaskFailed' ? 'failed' : e.type === 'TaskStopped' ? 'withdrawn' : 'running';
  // Only forward: a rebuild replays in order, and a status never goes back from an end to running.
  await client.query(
    `update tasks set last_seq = greatest(last_seq, $2), updated_at = $4,
       status = case when status in ('completed', 'failed', 'withdrawn') then status else $3 end
     where task_id = $1`,
    [d.task_id, d.seq ?? 0, status, e.recordedAt],
  );
  return [];
}
