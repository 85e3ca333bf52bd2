import { describe, expect, it } from 'vitest';
import { planRun } from '@ito/planner';
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
