import { describe, expect, it } from 'vitest';
import { adamStep, freshAdamOf } from '../src/trainers/adam.js';
import { ascend, freshAdam as freshPolicyAdam, POLICY_SIZE } from '../src/trainers/post-training/policy.js';
import { freshAdam as freshNetworkAdam, PARAMETER_COUNT } from '../src/trainers/tiny-model.js';

/**
 * The Adam step both reference trainers share (β1 0.9, β2 0.999, ε 1e-8), checked against values worked out by
 * hand: two steps on one parameter, so the moments and their bias correction each show.
 */
const LR = 0.01;

function twoSteps(g1: number, g2: number, direction: 'descend' | 'ascend') {
  const p = Float64Array.of(1);
  const adam = freshAdamOf(1);
  adamStep(p, adam, Float64Array.of(g1), LR, direction);
  const first = p[0]! - 1;
  adamStep(p, adam, Float64Array.of(g2), LR, direction);
  return { first, second: p[0]! - 1 - first, adam };
}

describe('the shared Adam step', () => {
  it('starts at zero moments and step, one entry per parameter', () => {
    const a = freshAdamOf(3);
    expect([a.t, [...a.m], [...a.v]]).toEqual([0, [0, 0, 0], [0, 0, 0]]);
  });

  it('moves each parameter by about lr on the first step, whatever the gradient`s size (the bias correction)', () => {
    for (const g of [0.5, 2, 40]) expect(twoSteps(g, g, 'ascend').first).toBeCloseTo(LR, 9);
  });

  it('keeps the running means: m = 0.9 m + 0.1 g, v = 0.999 v + 0.001 g², and counts its steps', () => {
    const { adam } = twoSteps(1, 3, 'descend');
    expect(adam.t).toBe(2);
    expect(adam.m[0]).toBeCloseTo(0.9 * 0.1 + 0.1 * 3, 12);
    expect(adam.v[0]).toBeCloseTo(0.999 * 0.001 + 0.001 * 9, 12);
  });

  it('a second step divides the corrected first moment by the root of the corrected second', () => {
    // m2 / (1 − 0.9²) = 0.39 / 0.19; v2 / (1 − 0.999²) = 0.009999 / 0.001999.
    expect(twoSteps(1, 3, 'ascend').second).toBeCloseTo((LR * (0.39 / 0.19)) / Math.sqrt(0.009999 / 0.001999), 10);
    // A gradient that turns round: the first moment still remembers the first step's direction.
    expect(twoSteps(1, -1, 'ascend').second).toBeCloseTo(LR * (-0.01 / 0.19), 10);
  });

  it('descends against the gradient and ascends along it, by the same amount', () => {
    const up = twoSteps(2, 1, 'ascend');
    const down = twoSteps(2, 1, 'descend');
    expect(up.first).toBeGreaterThan(0);
    expect([down.first, down.second]).toEqual([-up.first, -up.second]);
  });

  it('ε keeps a zero gradient from moving a parameter and damps a tiny one', () => {
    const p = Float64Array.of(1, 1);
    adamStep(p, freshAdamOf(2), Float64Array.of(0, 1e-8), LR, 'descend');
    expect(p[0]).toBe(1);
    // |g| / (|g| + ε) = 1e-8 / 2e-8: half a step.
    expect(1 - p[1]!).toBeCloseTo(LR / 2, 9);
  });

  it('sizes its state to each trainer`s parameters, and the policy`s ascend is the shared step', () => {
    expect(freshNetworkAdam().m).toHaveLength(PARAMETER_COUNT);
    expect(freshPolicyAdam().v).toHaveLength(POLICY_SIZE);
    const w = new Float64Array(POLICY_SIZE);
    const grad = new Float64Array(POLICY_SIZE);
    grad[7] = 3;
    ascend(w, freshPolicyAdam(), grad, LR);
    expect(w[7]).toBeCloseTo(LR, 9);
    expect(w.filter((x) => x !== 0)).toHaveLength(1);
  });
});
