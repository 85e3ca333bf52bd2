import { describe, expect, it } from 'vitest';
import { Random } from '../src/trainers/random.js';
import { answerDigits, completionText, drawProblem, overlongPenalty, parseCompletion, verify } from '../src/trainers/post-training/addition.js';
import { grpoStep, sampleBatch, type Settings } from '../src/trainers/post-training/grpo.js';
import { ascend, freshAdam, logProb, POLICY_SIZE } from '../src/trainers/post-training/policy.js';

const DAPO: Settings = { group: 8, epsLow: 0.2, epsHigh: 0.28, klWeight: 0, dynamicSampling: true, tokenLevel: true, overlong: true, maxTokens: 4096, buffer: 1024, staleness: 1, lr: 0.1 };

/** P(the exact sum) under the policy, averaged over fixed held-out problems: the expected verified reward. */
function expectedReward(w: Float64Array): number {
  const rng = Random.fromSeed('heldout');
  let sum = 0;
  for (let i = 0; i < 64; i++) {
    const p = drawProblem(rng);
    sum += Math.exp(logProb(w, p, answerDigits(p)));
  }
  return sum / 64;
}

/** A policy that has seen a little supervision (as after SFT), so some groups have mixed rewards. */
function warmStart(): Float64Array {
  const w = new Float64Array(POLICY_SIZE);
  const adam = freshAdam();
  const rng = Random.fromSeed('warm');
  const data = Array.from({ length: 48 }, () => drawProblem(rng));
  for (let i = 0; i < 60; i++) {
    const g = new Float64Array(POLICY_SIZE);
    for (let j = 0; j < 16; j++) {
      const p = data[rng.int(48)]!;
      logProb(w, p, answerDigits(p), g, 1 / 16);
    }
    ascend(w, adam, g, 0.05);
  }
  return w;
}

describe('the reference post-training learners', () => {
  it('the addition verifier checks the exact sum, and overlong shaping penalises only the buffer and beyond', () => {
    const p = { a: 478, b: 655 };
    expect(completionText(answerDigits(p))).toBe('1133');
    expect(verify(p, parseCompletion('1133')!)).toBe(1);
    expect(verify(p, parseCompletion('1134')!)).toBe(0);
    expect([overlongPenalty(3000, 4096, 1024), overlongPenalty(3584, 4096, 1024), overlongPenalty(5000, 4096, 1024)]).toEqual([0, -0.5, -1]);
  });

  it('GRPO with the DAPO options raises the expected verified reward, and dynamic sampling drops uniform groups', () => {
    const ctx = { weights: warmStart(), adam: freshAdam() } as Parameters<typeof grpoStep>[0];
    const reference = Float64Array.from(ctx.weights);
    const rng = Random.fromSeed('rollout');
    const before = expectedReward(ctx.weights);
    let dropped = 0;
    for (let step = 0; step < 60; step++) {
      const batch = sampleBatch(ctx.weights, DAPO, rng);
      dropped += batch.droppedGroups;
      // Every kept group carries a signal: its rewards differ.
      const groups = new Map<number, number[]>();
      for (const s of batch.samples) groups.set(s.group, [...(groups.get(s.group) ?? []), s.reward]);
      if (batch.samples.length > 1) for (const rewards of groups.values()) expect(new Set(rewards).size).toBeGreaterThan(1);
      grpoStep(ctx, DAPO, batch.samples, reference);
    }
    expect(dropped).toBeGreaterThan(0);
    expect(expectedReward(ctx.weights)).toBeGreaterThan(before + 0.1);
  });

  it('without dynamic sampling no group is dropped', () => {
    const batch = sampleBatch(new Float64Array(POLICY_SIZE), { ...DAPO, dynamicSampling: false }, Random.fromSeed('x'));
    expect(batch.droppedGroups).toBe(0);
    expect(batch.samples).toHaveLength(4 * DAPO.group);
  });
});
