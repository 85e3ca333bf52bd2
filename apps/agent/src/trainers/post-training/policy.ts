import { adamStep, freshAdamOf, type AdamState } from '../adam.js';
import type { Random } from '../random.js';
import { ANSWER_DIGITS, OPERAND_DIGITS, type Problem } from './addition.js';

/**
 * The reference post-training policy: for each answer digit, a softmax over 10 digits from a table indexed by
 * that position's operand digits and the carry into it. Tiny (2,000 numbers), but a real policy: it samples,
 * it has log-probabilities and their gradients, and SFT, DPO and GRPO each move it the way they should.
 */
const CONTEXTS = 10 * 10 * 2;
export const POLICY_SIZE = CONTEXTS * 10;

function digit(n: number, k: number): number {
  return k < OPERAND_DIGITS ? Math.floor(n / 10 ** k) % 10 : 0;
}

/** The table row each answer digit is drawn from. */
export function contextsOf(p: Problem): number[] {
  const out: number[] = [];
  let carry = 0;
  for (let k = 0; k < ANSWER_DIGITS; k++) {
    const [x, y] = [digit(p.a, k), digit(p.b, k)];
    out.push((x * 10 + y) * 2 + carry);
    carry = x + y + carry >= 10 ? 1 : 0;
  }
  return out;
}

function softmaxRow(w: Float64Array, ctx: number): Float64Array {
  const row = w.subarray(ctx * 10, ctx * 10 + 10);
  let max = -Infinity;
  for (const v of row) max = Math.max(max, v);
  const p = new Float64Array(10);
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += p[i] = Math.exp(row[i]! - max);
  for (let i = 0; i < 10; i++) p[i]! /= sum;
  return p;
}

/** Sum of the digits' log-probabilities; with `grad`, adds `scale` × its gradient. */
export function logProb(w: Float64Array, p: Problem, digits: number[], grad?: Float64Array, scale = 1): number {
  let lp = 0;
  contextsOf(p).forEach((ctx, k) => {
    const probs = softmaxRow(w, ctx);
    const y = digits[k]!;
    lp += Math.log(probs[y]!);
    if (grad) for (let i = 0; i < 10; i++) grad[ctx * 10 + i]! += scale * ((i === y ? 1 : 0) - probs[i]!);
  });
  return lp;
}

export function sample(w: Float64Array, p: Problem, rng: Random): { digits: number[]; logprob: number } {
  const digits = contextsOf(p).map((ctx) => {
    const probs = softmaxRow(w, ctx);
    let u = rng.next();
    for (let i = 0; i < 9; i++) {
      u -= probs[i]!;
      if (u < 0) return i;
    }
    return 9;
  });
  return { digits, logprob: logProb(w, p, digits) };
}

export function greedy(w: Float64Array, p: Problem): number[] {
  return contextsOf(p).map((ctx) => {
    const probs = softmaxRow(w, ctx);
    let best = 0;
    for (let i = 1; i < 10; i++) if (probs[i]! > probs[best]!) best = i;
    return best;
  });
}

export function freshAdam(): AdamState {
  return freshAdamOf(POLICY_SIZE);
}

/** One Adam step that *ascends* `grad` (the gradient of an objective to maximise). */
export function ascend(w: Float64Array, adam: AdamState, grad: Float64Array, lr: number): void {
  adamStep(w, adam, grad, lr, 'ascend');
}
