import { describe, expect, it } from 'vitest';
import type { TaskRole } from '@ito/contracts';
import {
  actsAs,
  assignTasks,
  checkBatchVersion,
  checkPolicyVersion,
  checkTrainerVersion,
  exchangeTask,
  foldRun,
  isColocated,
  judgeBatch,
  maxPolicyStalenessOf,
  roleOfRank,
  rolloutNodesFor,
  trainersDone,
  type RunEvent,
} from '@ito/domain';
import { PLAN, RUN as HISTORY_RUN, planned, refusal } from './support/run-history.js';

const RUN = `run_${'a'.repeat(32)}`;

describe('RLVR roles and the staleness rule', () => {
  it('gives the last ranks of an rlvr attempt the rollout role, rank 0 always training', () => {
    const roles = (stage: 'rlvr' | 'sft' | 'eval_post_training', nodes: number, rollout: number) =>
      assignTasks(RUN, stage, 1, Array.from({ length: nodes }, (_, i) => `node_${i}`), rollout).map((t) => t.role);
    expect(roles('rlvr', 2, 1)).toEqual(['trainer', 'rollout']);
    expect(roles('rlvr', 4, 3)).toEqual(['trainer', 'rollout', 'rollout', 'rollout']);
    // Never all rollout, and no rollout on one node or outside RLVR's split.
    expect(roles('rlvr', 2, 5)).toEqual(['trainer', 'rollout']);
    expect(roles('rlvr', 1, 1)).toEqual(['trainer']);
    expect(roles('sft', 2, 0)).toEqual(['trainer', 'trainer']);
    expect(roles('eval_post_training', 1, 1)).toEqual(['evaluator']);
  });

  it('accepts a batch only when current − version ≤ max_policy_staleness', () => {
    expect(judgeBatch(5, 3, 2)).toEqual({ accepted: true, staleness: 2 });
    expect(judgeBatch(5, 2, 2)).toEqual({ accepted: false, staleness: 3 });
    expect(judgeBatch(5, 5, 0)).toEqual({ accepted: true, staleness: 0 });
    expect(judgeBatch(4, 5, 2)).toEqual({ accepted: false, staleness: -1 });
  });

  it('lets only the rank-0 trainer of a colocated attempt post batches as its own rollout', () => {
    const tasksOf = (nodes: number, rollout: number) =>
      assignTasks(RUN, 'rlvr', 1, Array.from({ length: nodes }, (_, i) => `node_${i}`), rollout).map((t) => ({ ...t, status: 'running' as const, last_seq: 0 }));
    const colocated = tasksOf(2, 0);
    expect(isColocated(colocated)).toBe(true);
    expect(actsAs(colocated, colocated[0]!, 'rollout')).toBe(true);
    expect(actsAs(colocated, colocated[0]!, 'trainer')).toBe(true);
    // Another trainer rank does not sample: rank 0 speaks for the stage.
    expect(actsAs(colocated, colocated[1]!, 'rollout')).toBe(false);
    const separate = tasksOf(2, 1);
    expect(isColocated(separate)).toBe(false);
    // With a rollout node, the trainer posts no batch and the rollout publishes no policy.
    expect(actsAs(separate, separate[0]!, 'rollout')).toBe(false);
    expect(actsAs(separate, separate[1]!, 'rollout')).toBe(true);
    expect(actsAs(separate, separate[1]!, 'trainer')).toBe(false);
    expect(isColocated([])).toBe(false);
  });
});

describe('the exchange`s fencing and version rules', () => {
  const [A, B, C] = ['node_a', 'node_b', 'node_c'];
  const T = (attempt: number, rank: number) => `task_rlvr_${attempt}_${rank}`;
  const roles = ['trainer', 'trainer', 'rollout'] as const;
  const rlvrStarted = (attempt = 1, stage = 'rlvr', taskRoles: readonly TaskRole[] = roles): RunEvent => ({
    type: 'StageStarted',
    data: { run_id: HISTORY_RUN, stage, attempt, tasks: [A, B, C].slice(0, taskRoles.length).map((node_id, rank) => ({ task_id: T(attempt, rank), node_id, rank, role: taskRoles[rank]! })) },
  });
  const stateOf = (...events: RunEvent[]) => foldRun([...planned(), ...events]);
  const running = () => stateOf(rlvrStarted());
  const call = (o: Partial<{ task_id: string; node_id: string; attempt: number; role: TaskRole }> = {}) => ({ task_id: T(1, 2), node_id: C, attempt: 1, role: 'rollout' as TaskRole, ...o });
  const refusedBy = (fn: () => unknown) => refusal(fn);
  const completed = (rank: number, node: string): RunEvent => ({ type: 'TaskCompleted', data: { run_id: HISTORY_RUN, task_id: T(1, rank), stage: 'rlvr', attempt: 1, node_id: node, seq: 9, elapsed_s: 1 } });

  it('splits rollout nodes off RLVR only, as planned, always leaving one trainer', () => {
    const withSplit = (n: number | undefined) => ({ ...running(), plan: { ...PLAN, ...(n !== undefined ? { rlvr_rollout_nodes: n } : {}) } });
    expect(rolloutNodesFor(withSplit(2), 'rlvr', 4)).toBe(2);
    expect(rolloutNodesFor(withSplit(5), 'rlvr', 4)).toBe(3);
    expect(rolloutNodesFor(withSplit(undefined), 'rlvr', 4)).toBe(0);
    expect(rolloutNodesFor(withSplit(2), 'sft', 4)).toBe(0);
    expect(rolloutNodesFor(withSplit(2), 'rlvr', 1)).toBe(0);
    expect(rolloutNodesFor({ ...running(), plan: null }, 'rlvr', 4)).toBe(0);
  });

  it('gives ranks their roles: evaluators in an eval stage, the last `rollout` ranks roll out', () => {
    expect(roleOfRank('eval_post_training', 1, 2, 1)).toBe('evaluator');
    expect([0, 1, 2, 3].map((rank) => roleOfRank('rlvr', rank, 4, 2))).toEqual(['trainer', 'trainer', 'rollout', 'rollout']);
    expect([0, 1].map((rank) => roleOfRank('sft', rank, 2, 0))).toEqual(['trainer', 'trainer']);
  });

  it('reads the staleness bound of the stage`s recipe, 0 when it states none', () => {
    expect(maxPolicyStalenessOf(running(), 'rlvr')).toBe(2);
    expect(maxPolicyStalenessOf(running(), 'sft')).toBe(0);
    expect(maxPolicyStalenessOf({ ...running(), pipeline: null }, 'rlvr')).toBe(0);
  });

  it('hands back the task and its directive when the call is the current attempt`s, on its node, in its role', () => {
    const { task, directive } = exchangeTask(running(), call());
    expect([task.task_id, task.role, directive]).toEqual([T(1, 2), 'rollout', 'continue']);
    expect(exchangeTask(running(), call({ task_id: T(1, 0), node_id: A, role: 'trainer' })).task.rank).toBe(0);
  });

  it('a task unknown, of another node, or with no attempt running is not_found, naming only the task', () => {
    for (const [state, c] of [
      [running(), call({ task_id: 'task_other' })],
      [running(), call({ node_id: A })],
      [foldRun(planned()), call()],
    ] as const) {
      const r = refusedBy(() => exchangeTask(state, c));
      expect([r.code, r.message]).toEqual(['not_found', `task ${c.task_id} not found on this node`]);
    }
  });

  it('a superseded task (another attempt, an attempt ended, or told to stop) is invalid_state with the directive to stop', () => {
    const superseded = [
      [running(), call({ attempt: 2 })],
      [stateOf(rlvrStarted(), { type: 'StageFailed', data: { run_id: HISTORY_RUN, stage: 'rlvr', attempt: 1, reason: 'r' } }), call()],
      [stateOf(rlvrStarted(), { type: 'CancelRequested', data: { run_id: HISTORY_RUN, confirmation_ref: 'cfm_1' } }), call()],
    ] as const;
    for (const [state, c] of superseded) {
      const r = refusedBy(() => exchangeTask(state, c));
      expect(r).toEqual({ code: 'invalid_state', message: `task ${T(1, 2)} is not the current attempt of its stage; stop it`, details: { directive: 'stop' } });
    }
  });

  it('a task of another role, or of a stage that is not RLVR, is invalid_state without a directive', () => {
    const wrongRole = refusedBy(() => exchangeTask(running(), call({ role: 'trainer' })));
    expect(wrongRole).toEqual({ code: 'invalid_state', message: `task ${T(1, 2)} is not a trainer task of an rlvr stage`, details: undefined });
    const sft = stateOf(rlvrStarted(1, 'sft'));
    expect(refusedBy(() => exchangeTask(sft, call())).message).toBe(`task ${T(1, 2)} is not a rollout task of an rlvr stage`);
  });

  it('acts as rollout only for the rank-0 trainer, and only when no task rolls out', () => {
    const colocated = stateOf(rlvrStarted(1, 'rlvr', ['trainer', 'trainer'])).current!.tasks;
    const separate = running().current!.tasks;
    expect(actsAs(colocated, colocated[0]!, 'rollout')).toBe(true);
    expect(actsAs(colocated, colocated[1]!, 'rollout')).toBe(false);
    expect(actsAs(colocated, colocated[0]!, 'evaluator')).toBe(false);
    expect(actsAs(separate, separate[0]!, 'rollout')).toBe(false);
    const evaluator = { ...colocated[0]!, role: 'evaluator' as const };
    expect(actsAs([evaluator], evaluator, 'rollout')).toBe(false);
  });

  it('a policy follows the published one by one or repeats it, and lies strictly under the run`s prefix', () => {
    const state = running();
    const prefix = `s3://acme-checkpoints/code-8b-cpt/${HISTORY_RUN}/`;
    expect(checkPolicyVersion(state, 0, 1, `${prefix}rlvr/policy-v1`)).toBe('new');
    expect(checkPolicyVersion(state, 1, 1, `${prefix}rlvr/policy-v1`)).toBe('duplicate');
    const skip = refusedBy(() => checkPolicyVersion(state, 1, 3, `${prefix}rlvr/policy-v3`));
    expect([skip.code, skip.message]).toEqual(['invalid_state', 'policy version 3 does not follow the published version 1']);
    expect(refusedBy(() => checkPolicyVersion(state, 1, 0, `${prefix}rlvr/policy-v0`)).code).toBe('invalid_state');
    for (const uri of ['s3://acme-checkpoints/elsewhere/policy', `${prefix}../other/policy`, prefix]) {
      const outside = refusedBy(() => checkPolicyVersion(state, 0, 1, uri));
      expect([outside.code, outside.message]).toEqual(['validation_failed', `a policy of run ${HISTORY_RUN} must be stored under ${prefix}`]);
    }
  });

  it('a batch may be sampled with the published policy or an older one, never a newer one', () => {
    expect(() => checkBatchVersion(2, 2)).not.toThrow();
    expect(() => checkBatchVersion(2, 0)).not.toThrow();
    const ahead = refusedBy(() => checkBatchVersion(2, 3));
    expect([ahead.code, ahead.message]).toEqual(['validation_failed', 'policy version 3 is newer than the published version 2']);
  });

  it('the trainer must state the version it published', () => {
    expect(() => checkTrainerVersion(2, 2)).not.toThrow();
    for (const stated of [1, 3]) {
      const r = refusedBy(() => checkTrainerVersion(2, stated));
      expect([r.code, r.message]).toEqual(['invalid_state', `the trainer states policy version ${stated} but published 2`]);
    }
  });

  it('the trainers are done once every trainer task completed, whatever the rollout tasks did', () => {
    expect(trainersDone(running())).toBe(false);
    expect(trainersDone(stateOf(rlvrStarted(), completed(0, A)))).toBe(false);
    expect(trainersDone(stateOf(rlvrStarted(), completed(0, A), completed(1, B)))).toBe(true);
    expect(trainersDone(stateOf(rlvrStarted(), completed(2, C)))).toBe(false);
    // No attempt, or one without a trainer, is never done.
    expect(trainersDone(foldRun(planned()))).toBe(false);
    expect(trainersDone(stateOf(rlvrStarted(1, 'rlvr', ['rollout'])))).toBe(false);
  });
});
