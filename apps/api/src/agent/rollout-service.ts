import { createHash } from 'node:crypto';
import type pg from 'pg';
import {
  ItoError,
  type PolicyAnswer,
  type PolicyBody,
  type PublishedPolicy,
  type RolloutBatchAnswer,
  type RolloutBatchBody,
  type RolloutMetrics,
  type RolloutPollAnswer,
  type RolloutPollQuery,
  type RolloutSample,
  type TaskRole,
} from '@ito/contracts';
import { checkBatchVersion, checkPolicyVersion, checkTrainerVersion, exchangeTask, judgeBatch, maxPolicyStalenessOf, trainersDone, type RunAggregate } from '@ito/domain';
import { ASSIGNMENTS_CHANNEL, getRun } from '@ito/runs';
import type { Principal } from '../auth/principal.js';
import type { Resources } from '../resources.js';
import { pollUntil } from './assignment-notifier.js';

type NodePrincipal = Extract<Principal, { kind: 'node' }>;
type Db = pg.Pool | pg.PoolClient;

/** Rows judged per poll at most: rejections beyond this wait for the next poll. */
const JUDGE_LIMIT = 64;

function batchIdFor(taskId: string, seq: number): string {
  return `rbt_${createHash('sha256').update(`${taskId}:${seq}`).digest('hex').slice(0, 32)}`;
}

/** The run of a task of this node, and the task fenced for its role (see `exchangeTask`). */
async function fencedTask(db: Db, node: NodePrincipal, taskId: string, attempt: number, role: TaskRole) {
  const { rows } = await db.query<{ run_id: string }>({
    name: 'ito_rollout_task_owner',
    text: 'select run_id from tasks where task_id = $1 and node_id = $2 and tenant_id = $3',
    values: [taskId, node.nodeId, node.tenantId],
  });
  const runId = rows[0]?.run_id;
  const run = runId ? await getRun(db, node.tenantId, runId) : null;
  if (!run) throw new ItoError('not_found', `task ${taskId} not found on this node`);
  const fenced = exchangeTask(run.aggregate, { task_id: taskId, node_id: node.nodeId, attempt, role });
  if (role === 'trainer' && fenced.task.rank !== 0) throw new ItoError('invalid_state', `task ${taskId} is not rank 0: the rank-0 trainer exchanges with rollout`);
  return { state: run.aggregate, runId: run.run_id, ...fenced };
}

async function publishedPolicy(db: Db, runId: string, stage: string, attempt: number, lock = false): Promise<PublishedPolicy> {
  const { rows } = await db.query<{ version: number; uri: string }>(
    `select version, uri from rollout_policies where run_id = $1 and stage = $2 and attempt = $3${lock ? ' for update' : ''}`,
    [runId, stage, attempt],
  );
  // Version 0 is the weights the stage started from (the row exists once the trainer first publishes).
  return rows[0] && rows[0].version > 0 ? { version: rows[0].version, uri: rows[0].uri } : { version: 0, uri: null };
}

function attemptOf(state: RunAggregate): { stage: string; attempt: number } {
  return { stage: state.current!.stage, attempt: state.current!.attempt };
}

/** `POST /v1/agent/tasks/:id/rollouts`: a rollout task's batch, stored once per sequence number. */
export async function postRolloutBatch(res: Resources, node: NodePrincipal, taskId: string, body: RolloutBatchBody): Promise<RolloutBatchAnswer> {
  return res.ledger.transaction(async (tx) => {
    const { state, runId, directive } = await fencedTask(tx.client, node, taskId, body.attempt, 'rollout');
    const { stage, attempt } = attemptOf(state);
    const policy = await publishedPolicy(tx.client, runId, stage, attempt);
    const batchId = batchIdFor(taskId, body.seq);
    const answer = (duplicate: boolean): RolloutBatchAnswer => ({ task_id: taskId, batch_id: batchId, duplicate, directive, policy, trainer_done: trainersDone(state) });
    const existing = await tx.client.query('select 1 from rollout_batches where batch_id = $1', [batchId]);
    if (existing.rowCount) return answer(true);
    // Once the trainer is done nothing more is trained on: the batch is not kept.
    if (trainersDone(state)) return answer(false);
    checkBatchVersion(policy.version, body.policy_version);
    await tx.client.query(
      `insert into rollout_batches (batch_id, tenant_id, run_id, stage, attempt, task_id, seq, policy_version, samples, dropped_groups, status)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending')`,
      [batchId, node.tenantId, runId, stage, attempt, taskId, body.seq, body.policy_version, JSON.stringify(body.samples), body.dropped_groups ?? 0],
    );
    // Wake the trainer's long poll (it waits on its node's channel, as the assignments poll does).
    const trainer = state.current!.tasks.find((t) => t.role === 'trainer' && t.rank === 0);
    if (trainer) await tx.client.query('select pg_notify($1, $2)', [ASSIGNMENTS_CHANNEL, trainer.node_id]);
    return answer(false);
  });
}

/** `POST /v1/agent/tasks/:id/policy`: the rank-0 trainer publishes its next policy version. */
export async function publishPolicy(res: Resources, node: NodePrincipal, taskId: string, body: PolicyBody): Promise<PolicyAnswer> {
  return res.ledger.transaction(async (tx) => {
    const { state, runId, directive } = await fencedTask(tx.client, node, taskId, body.attempt, 'trainer');
    const { stage, attempt } = attemptOf(state);
    await tx.client.query('insert into rollout_policies (tenant_id, run_id, stage, attempt, version, uri) values ($1, $2, $3, $4, 0, $5) on conflict do nothing', [
      node.tenantId,
      runId,
      stage,
      attempt,
      '',
    ]);
    const published = await publishedPolicy(tx.client, runId, stage, attempt, true);
    const verdict = checkPolicyVersion(state, published.version, body.version, body.uri);
    if (verdict === 'new') {
      await tx.client.query('update rollout_policies set version = $4, uri = $5, updated_at = now() where run_id = $1 and stage = $2 and attempt = $3', [runId, stage, attempt, body.version, body.uri]);
    }
    return { task_id: taskId, duplicate: verdict === 'duplicate', directive, policy: { version: body.version, uri: body.uri } };
  });
}

interface PendingRow {
  batch_id: string;
  policy_version: number;
  samples: RolloutSample[];
  dropped_groups: number;
}

/**
 * `GET /v1/agent/tasks/:id/rollouts`: the rank-0 trainer takes the batches within the staleness bound of the
 * version it states (which must be the version it published); older ones are rejected now with their staleness.
 * Held open up to `wait_s` while nothing is pending.
 */
export async function pollRollouts(res: Resources, node: NodePrincipal, taskId: string, query: RolloutPollQuery, signal: AbortSignal): Promise<RolloutPollAnswer> {
  const deadline = Date.now() + query.wait_s * 1000;
  const read = () =>
    res.ledger.transaction(async (tx) => {
      const { state, runId, directive } = await fencedTask(tx.client, node, taskId, query.attempt, 'trainer');
      const { stage, attempt } = attemptOf(state);
      checkTrainerVersion((await publishedPolicy(tx.client, runId, stage, attempt)).version, query.policy_version);
      const bound = maxPolicyStalenessOf(state, stage);
      const { rows } = await tx.client.query<PendingRow>(
        `select batch_id, policy_version, samples, dropped_groups from rollout_batches
         where run_id = $1 and stage = $2 and attempt = $3 and status = 'pending' order by created_at, batch_id limit $4 for update skip locked`,
        [runId, stage, attempt, JUDGE_LIMIT],
      );
      const out: RolloutPollAnswer = { task_id: taskId, directive, batches: [], rejected: [] };
      for (const row of rows) {
        const verdict = judgeBatch(query.policy_version, row.policy_version, bound);
        if (verdict.accepted && out.batches.length >= query.max) continue;
        // Once judged, a batch's samples are never read again (handed over once, or never): only its counts stay.
        await tx.client.query(`update rollout_batches set status = $2, staleness = $3, judged_at = now(), samples = '[]'::jsonb where batch_id = $1`, [
          row.batch_id,
          verdict.accepted ? 'accepted' : 'rejected',
          verdict.staleness,
        ]);
        if (verdict.accepted) out.batches.push({ batch_id: row.batch_id, policy_version: row.policy_version, staleness: verdict.staleness, samples: row.samples, dropped_groups: row.dropped_groups });
        else out.rejected.push({ batch_id: row.batch_id, policy_version: row.policy_version, staleness: verdict.staleness });
      }
      return out;
    });
  return pollUntil(res.assignments, node.nodeId, deadline, signal, read, (answer) => answer.batches.length > 0 || answer.rejected.length > 0);
}

/** The exchange of every RLVR attempt of a run: counts, dropped groups and the staleness histogram. */
export async function rolloutMetrics(db: Db, tenantId: string, runId: string): Promise<RolloutMetrics> {
  const { rows } = await db.query<{ stage: string; attempt: number; status: string; staleness: number | null; n: number; dropped: number }>(
    `select stage, attempt, status, staleness, count(*)::int as n, sum(dropped_groups)::int as dropped from rollout_batches
     where tenant_id = $1 and run_id = $2 group by stage, attempt, status, staleness order by stage, attempt, staleness`,
    [tenantId, runId],
  );
  const policies = await db.query<{ stage: string; attempt: number; version: number }>('select stage, attempt, version from rollout_policies where tenant_id = $1 and run_id = $2', [tenantId, runId]);
  const attempts = new Map<string, RolloutMetrics['attempts'][number]>();
  const entry = (stage: string, attempt: number) => {
    const key = `${stage}@${attempt}`;
    let e = attempts.get(key);
    if (!e) attempts.set(key, (e = { stage, attempt, batches: 0, pending: 0, accepted: 0, rejected: 0, dropped_groups: 0, policy_version: 0, staleness_histogram: {} }));
    return e;
  };
  for (const r of rows) {
    const e = entry(r.stage, r.attempt);
    e.batches += r.n;
    e.dropped_groups += r.dropped;
    if (r.status === 'pending') {
      e.pending += r.n;
      continue;
    }
    const accepted = r.status === 'accepted';
    if (accepted) e.accepted += r.n;
    else e.rejected += r.n;
    const bucket = (e.staleness_histogram[String(r.staleness)] ??= { accepted: 0, rejected: 0 });
    bucket[accepted ? 'accepted' : 'rejected'] += r.n;
  }
  for (const p of policies.rows) entry(p.stage, p.attempt).policy_version = p.version;
  return { attempts: [...attempts.values()].sort((a, b) => a.stage.localeCompare(b.stage) || a.attempt - b.attempt) };
}
