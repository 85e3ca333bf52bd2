import { describe, expect, it } from 'vitest';
import { planPostTraining, planRun } from '@ito/planner';
import { booking, manifestWith, NOW } from './fixtures.js';

const rlvr = (m: ReturnType<typeof manifestWith>) => m.post_training.recipe.find((s) => s.stage === 'rlvr') as Extract<(typeof m.post_training.recipe)[number], { stage: 'rlvr' }>;

describe('post-training placement in the plan', () => {
  it('given the example recipe on 2 nodes, when planned, then RLVR splits 1 trainer and 1 rollout node and SFT/DPO use both', () => {
    const r = planRun({ manifest: manifestWith(() => {}), booking: booking({ nodes: 2 }), now: NOW });
    if (!r.ok) throw new Error(r.reason);
    expect(r.plan.post_training).toEqual([
      { stage: 'sft', trainer_nodes: 2, rollout_nodes: 0, separated: false },
      { stage: 'dpo', trainer_nodes: 2, rollout_nodes: 0, separated: false },
      { stage: 'rlvr', trainer_nodes: 1, rollout_nodes: 1, separated: true },
    ]);
    expect(r.plan.reasons.some((x) => x.startsWith('rlvr: 1 trainer node(s) and 1 rollout node(s)'))).toBe(true);
  });

  it('given separation preferred on 1 node, when planned, then trainer and rollout share the node', () => {
    const r = planRun({ manifest: manifestWith(() => {}), booking: booking({ nodes: 1, gpu: 'h200' }), now: NOW });
    if (!r.ok) throw new Error(r.reason);
    expect(r.plan.post_training.at(-1)).toEqual({ stage: 'rlvr', trainer_nodes: 1, rollout_nodes: 0, separated: false });
  });

  it('given separation required on 1 node, when planned, then plan_refused with the reason', () => {
    const m = manifestWith((x) => (rlvr(x).separation = 'required'));
    const r = planRun({ manifest: m, booking: booking({ nodes: 1 }), now: NOW });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.code).toBe('plan_refused');
    expect(r.reason).toMatch(/separate nodes \(separation: required\) but the booking has 1 node/);
  });

  it('given rollout_nodes that leave no trainer, when planned, then plan_refused', () => {
    const m = manifestWith((x) => (rlvr(x).rollout_nodes = 4));
    const r = planRun({ manifest: m, booking: booking({ nodes: 4 }), now: NOW });
    expect(r.ok ? null : r.reason).toMatch(/rollout_nodes 4 leaves no trainer node/);
  });

  it('given completions longer than the training context, when planned, then plan_refused', () => {
    const m = manifestWith((x) => (rlvr(x).max_response_tokens = 16384));
    const r = planRun({ manifest: m, booking: booking(), now: NOW });
    expect(r.ok ? null : r.reason).toMatch(/max_response_tokens 16384 exceeds the target sequence length 8192/);
  });

  it('given rollout_nodes 3 on 4 nodes, when planned, then 1 trainer node and 3 rollout nodes', () => {
    const m = manifestWith((x) => (rlvr(x).rollout_nodes = 3));
    const r = planRun({ manifest: m, booking: booking({ nodes: 4 }), now: NOW });
    if (!r.ok) throw new Error(r.reason);
    expect(r.plan.post_training.at(-1)).toEqual({ stage: 'rlvr', trainer_nodes: 1, rollout_nodes: 3, separated: true });
  });
});

describe('post-training placement: boundaries and what each refusal and reason says', () => {
  const placed = (m: ReturnType<typeof manifestWith>, nodes: number) => planPostTraining(m, { nodes });

  it('a curriculum without post-training places nothing, whatever the recipe', () => {
    const m = manifestWith((x) => (x.target.curriculum = ['pretrain']));
    expect(placed(m, 2)).toEqual({ ok: true, placements: [], reasons: [] });
  });

  it('completions as long as the training context are allowed; one token more is refused', () => {
    expect(placed(manifestWith((x) => (rlvr(x).max_response_tokens = 8192)), 2).ok).toBe(true);
    expect(placed(manifestWith((x) => (rlvr(x).max_response_tokens = 8193)), 2)).toEqual({
      ok: false,
      code: 'plan_refused',
      reason: 'rlvr: max_response_tokens 8193 exceeds the target sequence length 8192',
    });
  });

  it('separation required on one node says so in full; on two nodes it splits them', () => {
    const m = manifestWith((x) => (rlvr(x).separation = 'required'));
    expect(placed(m, 1)).toEqual({
      ok: false,
      code: 'plan_refused',
      reason: 'rlvr requires trainer and rollout on separate nodes (separation: required) but the booking has 1 node; book 2 or more, or allow colocation',
    });
    const two = placed(m, 2);
    expect(two.ok && two.placements.at(-1)).toEqual({ stage: 'rlvr', trainer_nodes: 1, rollout_nodes: 1, separated: true });
  });

  it('separation preferred on one node: trainer and rollout share it, and rollout_nodes cannot be asked for', () => {
    const shared = placed(manifestWith(() => {}), 1);
    if (!shared.ok) throw new Error(shared.reason);
    expect(shared.placements.at(-1)).toEqual({ stage: 'rlvr', trainer_nodes: 1, rollout_nodes: 0, separated: false });
    expect(shared.reasons).toEqual(["rlvr: trainer and rollout share the booking's one node (separation: preferred); rollouts at most 2 policy versions old are trained on."]);
    expect(placed(manifestWith((x) => (rlvr(x).rollout_nodes = 1)), 1)).toEqual({
      ok: false,
      code: 'plan_refused',
      reason: 'rlvr: rollout_nodes 1 needs separate rollout nodes, but the booking has 1 node',
    });
  });

  it('colocated by choice on several nodes shares all of them', () => {
    const m = manifestWith((x) => (rlvr(x).separation = 'colocated'));
    const r = placed(m, 4);
    if (!r.ok) throw new Error(r.reason);
    expect(r.placements.at(-1)).toEqual({ stage: 'rlvr', trainer_nodes: 4, rollout_nodes: 0, separated: false });
    expect(r.reasons[0]).toMatch(/^rlvr: trainer and rollout share all 4 nodes \(separation: colocated\)/);
  });

  it('by default half the nodes, rounded down, roll out; all but one may, none more', () => {
    const split = (nodes: number, rollout_nodes?: number) => {
      const r = placed(manifestWith((x) => (rlvr(x).rollout_nodes = rollout_nodes)), nodes);
      return r.ok ? r.placements.at(-1) : r.reason;
    };
    expect(split(4)).toEqual({ stage: 'rlvr', trainer_nodes: 2, rollout_nodes: 2, separated: true });
    expect(split(3)).toEqual({ stage: 'rlvr', trainer_nodes: 2, rollout_nodes: 1, separated: true });
    expect(split(4, 3)).toEqual({ stage: 'rlvr', trainer_nodes: 1, rollout_nodes: 3, separated: true });
    expect(split(4, 4)).toBe("rlvr: rollout_nodes 4 leaves no trainer node of the booking's 4");
    const r = placed(manifestWith(() => {}), 3);
    expect(r.ok && r.reasons).toEqual([
      'rlvr: 2 trainer node(s) and 1 rollout node(s) (separation: preferred); rollout batches are tagged with their policy version and trained on only when at most 2 versions behind.',
    ]);
  });
});
