import type pg from 'pg';
import {
  ASSIGNMENTS_MAX_WAIT_S,
  type AgentHeartbeatBody,
  type AgentRegisterBody,
  type AgentRegistration,
  type Assignment,
  type AssignmentsAnswer,
  type HeartbeatAnswer,
  type TaskSpec,
  type TaskStatus,
} from '@ito/contracts';
import { directiveFor, normalizeRunAggregate, type RunAggregate } from '@ito/domain';
import type { Principal } from '../auth/principal.js';
import type { Resources } from '../resources.js';
import { pollUntil } from './assignment-notifier.js';
import type { AgentSettings } from './agent-settings.js';
import { gpusTexts } from './gpus-text.js';
import type { Beat } from './liveness-writer.js';

export type NodePrincipal = Extract<Principal, { kind: 'node' }>;

/** `POST /v1/agent/register`: the node says who it is; the answer says how often to heartbeat. */
export async function registerAgent(res: Resources, node: NodePrincipal, body: AgentRegisterBody): Promise<AgentRegistration> {
  const now = res.now();
  const { rows } = await res.pool.query<{ name: string }>(
    `update nodes set agent = $3, registered_at = $4, last_heartbeat_at = $4, last_health = $5
     where node_id = $1 and tenant_id = $2 returning name`,
    [node.nodeId, node.tenantId, JSON.stringify({ agent_version: body.agent_version, executor: body.executor, hostname: body.hostname ?? null, rendezvous: body.rendezvous ?? null }), now, JSON.stringify(body.gpus)],
  );
  await res.liveness.record({ node_id: node.nodeId, tenant_id: node.tenantId, at: now, health: body.gpus, task: null });
  return {
    node_id: node.nodeId,
    booking_id: node.bookingId,
    name: rows[0]?.name ?? '',
    heartbeat_interval_s: res.agent.heartbeatIntervalS,
    heartbeat_misses: res.agent.heartbeatMisses,
    server_time: now.toISOString(),
  };
}

interface TaskWithRun {
  task_id: string;
  run_id: string;
  stage: string;
  attempt: number;
  status: TaskStatus;
  last_seq: number;
  spec: TaskSpec;
  aggregate: Partial<RunAggregate> | null;
}

/**
 * `POST /v1/agent/heartbeat`: liveness and GPU health, without an event (the ledger records transitions, not
 * beats). The answer names the tasks the agent runs that it must stop, and what each running one should do.
 */
export async function heartbeat(res: Resources, node: NodePrincipal, body: AgentHeartbeatBody, certainText?: string): Promise<HeartbeatAnswer> {
  const beat = beatOf(node, body, res.now());
  // The body's own GPU list text when the hand-written check accepted it (gpus-text.ts: one beat, one list).
  const healthText = certainText !== undefined ? gpusTexts(certainText, 1)?.[0] : undefined;
  if (healthText !== undefined) beat.healthText = healthText;
  await res.liveness.record(beat);
  res.metrics.heartbeatsIngested.inc();
  return { interval_s: res.agent.heartbeatIntervalS, ...(await tasksToStop(res, node, body.tasks)) };
}

/**
 * A heartbeat as the liveness table keeps it. The task whose progress a hang is judged on: the first whose
 * trainer reports steps (one task per node per stage; a finished one may linger while its last reports are
 * delivered). Without a step nothing is judged.
 */
export function beatOf(node: NodePrincipal, body: AgentHeartbeatBody, at: Date): Beat {
  const first = body.tasks.find((t) => t.step !== undefined) ?? body.tasks[0];
  return {
    node_id: node.nodeId,
    tenant_id: node.tenantId,
    at,
    health: body.gpus,
    task: first ? { task_id: first.task_id, attempt: first.attempt, step: first.step ?? null } : null,
  };
}

/** Which of the tasks a beat names the node must stop, and what each running one should do. */
export async function tasksToStop(res: Resources, node: NodePrincipal, tasks: AgentHeartbeatBody['tasks']): Promise<Pick<HeartbeatAnswer, 'stop' | 'directives'>> {
  if (tasks.length === 0) return { stop: [], directives: [] };
  return judgeReportedTasks(tasks, new Map((await tasksOf(res.pool, node, tasks.map((t) => t.task_id))).map((t) => [t.task_id, t])));
}

/** What a task's run needs to judge a beat's report of it. */
export type ReportedTaskRow = Pick<TaskWithRun, 'task_id' | 'attempt' | 'status' | 'aggregate'>;

/**
 * The answer to the tasks a beat names, given the node's own tasks among them (`known`, by id): one that is not
 * the node's, or not at that attempt, is to stop; one no longer active is to stop; a running one gets its run's
 * directive unless that is to continue.
 */
export function judgeReportedTasks(tasks: AgentHeartbeatBody['tasks'], known: ReadonlyMap<string, ReportedTaskRow>): Pick<HeartbeatAnswer, 'stop' | 'directives'> {
  const answer: Pick<HeartbeatAnswer, 'stop' | 'directives'> = { stop: [], directives: [] };
  for (const reported of tasks) {
    const task = known.get(reported.task_id);
    if (!task || task.attempt !== reported.attempt) {
      answer.stop.push({ task_id: reported.task_id, reason: 'no such task on this node' });
      continue;
    }
    const directive = task.aggregate ? directiveFor(normalizeRunAggregate(task.aggregate), task.task_id) : 'stop';
    if (task.status !== 'assigned' && task.status !== 'running') answer.stop.push({ task_id: task.task_id, reason: `task is ${task.status}` });
    else if (directive !== 'continue') answer.directives.push({ task_id: task.task_id, directive });
  }
  return answer;
}

async function tasksOf(pool: pg.Pool, node: NodePrincipal, taskIds: string[] | null): Promise<TaskWithRun[]> {
  const { rows } = await pool.query<TaskWithRun>({
    name: taskIds ? 'ito_agent_tasks_by_id' : 'ito_agent_tasks_active',
    text: `select t.task_id, t.run_id, t.stage, t.attempt, t.status, t.last_seq, t.spec, r.aggregate
           from tasks t left join runs r on r.run_id = t.run_id
           where t.node_id = $1 and t.tenant_id = $2
             and ${taskIds ? 't.task_id = any($3::text[])' : "t.status in ('assigned', 'running')"}
           order by t.created_at, t.task_id`,
    values: taskIds ? [node.nodeId, node.tenantId, taskIds] : [node.nodeId, node.tenantId],
  });
  return rows;
}

function toAssignment(t: TaskWithRun): Assignment {
  return {
    task_id: t.task_id,
    run_id: t.run_id,
    stage: t.stage as Assignment['stage'],
    attempt: t.attempt,
    status: t.status,
    next_seq: t.last_seq + 1,
    directive: t.aggregate ? directiveFor(normalizeRunAggregate(t.aggregate), t.task_id) : 'stop',
    spec: t.spec,
  };
}

/**
 * `GET /v1/agent/assignments?wait_s=&known=`: the node's active tasks. When they are exactly the ones the agent
 * already knows (`known`), the request is held open until the tasks projection notifies this node or `wait_s`
 * passes: work reaches an idle agent as soon as it commits, a withdrawal reaches a busy one as soon, and a
 * quiet fleet costs one open request per node rather than a poll loop.
 */
export async function assignments(res: Resources, node: NodePrincipal, waitS: number, known: string[], signal: AbortSignal): Promise<AssignmentsAnswer> {
  const deadline = Date.now() + Math.min(waitS, ASSIGNMENTS_MAX_WAIT_S) * 1000;
  const knownSet = new Set(known);
  const changed = (tasks: TaskWithRun[]) => tasks.length !== knownSet.size || tasks.some((t) => !knownSet.has(t.task_id));
  const active = await pollUntil(res.assignments, node.nodeId, deadline, signal, () => tasksOf(res.pool, node, null), changed);
  return { assignments: active.map(toAssignment) };
}
