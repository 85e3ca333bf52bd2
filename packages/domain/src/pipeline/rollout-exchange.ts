import { ItoError, type Directive, type TaskRole } from '@ito/contracts';
import type { RunAggregate, TaskState } from '../run/run-state.js';
import { directiveFor } from '../run/task-reports.js';
import { checkpointPrefix, isInsidePrefix } from '../run/checkpoint-uris.js';

/**
 * The RLVR exchange's decisions (docs/pipeline.md, "Trainer and rollout"): which nodes roll out, which task may
 * post batches or policies, and whether the trainer may train on a batch. Pure: the API does the I/O.
 */

/** Nodes of a stage's attempt that roll out: RLVR's planned split, always leaving one trainer. */
export function rolloutNodesFor(state: RunAggregate, stage: string, nodes: number): number {
  if (stage !== 'rlvr') return 0;
  return Math.max(0, Math.min(state.plan?.rlvr_rollout_nodes ?? 0, nodes - 1));
}

/** The roles of a node stage's tasks by rank: the first ranks train, the last `rollout` roll out. */
export function roleOfRank(stage: string, rank: number, nodes: number, rollout: number): TaskRole {
  if (stage.startsWith('eval_')) return 'evaluator';
  return rank >= nodes - rollout ? 'rollout' : 'trainer';
}

/** RLVR's staleness bound as the recipe states it. */
export function maxPolicyStalenessOf(state: RunAggregate, stage: string): number {
  const value = state.pipeline?.steps.find((s) => s.stage === stage)?.recipe?.max_policy_staleness;
  return typeof value === 'number' ? value : 0;
}

export interface BatchVerdict {
  accepted: boolean;
  /** Policy versions the batch's sampler is behind the trainer. */
  staleness: number;
}

/** The staleness rule: a batch is trained on only when `current − batch version ≤ max_policy_staleness`. */
export function judgeBatch(currentVersion: number, batchVersion: number, maxStaleness: number): BatchVerdict {
  const staleness = currentVersion - batchVersion;
  return { accepted: staleness >= 0 && staleness <= maxStaleness, staleness };
}

/**
 * Fencing for the exchange, as for task reports: the task must be of the run's current, running attempt, on the
 * calling node, with the attempt the call names, still active, and of the role the route is for. A superseded
 * task is `invalid_state` with the directive to stop.
 */
export function exchangeTask(state: RunAggregate, call: { task_id: string; node_id: string; attempt: number; role: TaskRole }): { task: TaskState; directive: Directive } {
  const current = state.current;
  const task = current?.tasks.find((t) => t.task_id === call.task_id);
  if (!current || !task || task.node_id !== call.node_id) throw new ItoError('not_found', `task ${call.task_id} not found on this node`);
  const directive = directiveFor(state, task.task_id);
  if (current.attempt !== call.attempt || current.status !== 'running' || directive === 'stop') {
    throw new ItoError('invalid_state', `task ${call.task_id} is not the current attempt of its stage; stop it`, { directive: 'stop' });
  }
  if (current.stage !== 'rlvr' || !actsAs(current.tasks, task, call.role)) throw new ItoError('invalid_state', `task ${call.task_id} is not a ${call.role} task of an rlvr stage`);
  return { task, directive };
}

/**
 * Whether a task may use a route of `role`: its own role, or rollout for the rank-0 trainer of a colocated attempt
 * (one with no rollout task), which samples its own batches and posts them like a rollout node would, so the
 * control plane judges and counts them the same way.
 */
export function actsAs(tasks: readonly TaskState[], task: TaskState, role: TaskRole): boolean {
  if (task.role === role) return true;
  return role === 'rollout' && task.role === 'trainer' && task.rank === 0 && isColocated(tasks);
}

/** An RLVR attempt with no rollout task: trainer and rollout share the nodes. */
export function isColocated(tasks: readonly Pick<TaskState, 'role'>[]): boolean {
  return tasks.length > 0 && !tasks.some((t) => t.role === 'rollout');
}

/** A new policy version follows the last one by one (or repeats it), and its weights lie under the run's prefix. */
export function checkPolicyVersion(state: RunAggregate, published: number, version: number, uri: string): 'new' | 'duplicate' {
  const prefix = checkpointPrefix(state.pipeline!.checkpoint.storage, state.runId!);
  if (!isInsidePrefix(uri, prefix)) throw new ItoError('validation_failed', `a policy of run ${state.runId} must be stored under ${prefix}`);
  if (version === published) return 'duplicate';
  if (version !== published + 1) throw new ItoError('invalid_state', `policy version ${version} does not follow the published version ${published}`);
  return 'new';
}

/** A rollout cannot sample with a policy the trainer has not published yet. */
export function checkBatchVersion(published: number, batchVersion: number): void {
  if (batchVersion > published) throw new ItoError('validation_failed', `policy version ${batchVersion} is newer than the published version ${published}`);
}

/** The trainer's stated version must be the one it published: staleness is judged against the truth. */
export function checkTrainerVersion(published: number, stated: number): void {
  if (stated !== published) throw new ItoError('invalid_state', `the trainer states policy version ${stated} but published ${published}`);
}

/** Whether the trainer tasks of the attempt have all completed: the rollout tasks may complete. */
export function trainersDone(state: RunAggregate): boolean {
  const trainers = state.current?.tasks.filter((t) => t.role === 'trainer') ?? [];
  return trainers.length > 0 && trainers.every((t) => t.status === 'completed');
}
