import { describe, expect, it } from 'vitest';
import { actsAs, assignTasks, isColocated, judgeBatch } from '@ito/domain';

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
