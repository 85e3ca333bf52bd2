import { CLASSES, INPUTS, type Batch } from './synthetic-data.js';
import type { Random } from './random.js';
import { adamStep, freshAdamOf, type AdamState } from './adam.js';

/**
 * A one-hidden-layer network (tanh, softmax cross-entropy), trained with Adam (adam.ts), in plain TypeScript. All
 * parameters live in one flat vector so that the optimizer and checkpoints treat them alike.
 */
export const HIDDEN = 16;
const W1 = 0;
const B1 = W1 + INPUTS * HIDDEN;
const W2 = B1 + HIDDEN;
const B2 = W2 + HIDDEN * CLASSES;
export const PARAMETER_COUNT = B2 + CLASSES;

const LEARNING_RATE = 0.003;

export function initialParameters(rng: Random): Float64Array {
  const p = new Float64Array(PARAMETER_COUNT);
  for (let i = W1; i < B1; i++) p[i] = rng.normal() / Math.sqrt(INPUTS);
  for (let i = W2; i < B2; i++) p[i] = rng.normal() / Math.sqrt(HIDDEN);
  return p;
}

export function freshAdam(): AdamState {
  return freshAdamOf(PARAMETER_COUNT);
}

/** Mean cross-entropy and accuracy of the parameters on a batch; with `grad`, also the gradient of the loss. */
export function evaluate(p: Float64Array, batch: Batch, grad?: Float64Array): { loss: number; accuracy: number } {
  grad?.fill(0);
  const h = new Float64Array(HIDDEN);
  const z = new Float64Array(CLASSES);
  const dzs = new Float64Array(CLASSES);
  let loss = 0;
  let correct = 0;
  for (let b = 0; b < batch.size; b++) {
    const x = batch.x.subarray(b * INPUTS, (b + 1) * INPUTS);
    for (let j = 0; j < HIDDEN; j++) {
      let s = p[B1 + j]!;
      for (let i = 0; i < INPUTS; i++) s += x[i]! * p[W1 + i * HIDDEN + j]!;
      h[j] = Math.tanh(s);
    }
    let max = -Infinity;
    for (let k = 0; k < CLASSES; k++) {
      let s = p[B2 + k]!;
      for (let j = 0; j < HIDDEN; j++) s += h[j]! * p[W2 + j * CLASSES + k]!;
      z[k] = s;
      max = Math.max(max, s);
    }
    let sum = 0;
    for (let k = 0; k < CLASSES; k++) sum += Math.exp(z[k]! - max);
    const y = batch.y[b]!;
    loss += Math.log(sum) + max - z[y]!;
    let best = 0;
    for (let k = 1; k < CLASSES; k++) if (z[k]! > z[best]!) best = k;
    if (best === y) correct++;
    if (!grad) continue;
    for (let k = 0; k < CLASSES; k++) {
      const dz = (Math.exp(z[k]! - max) / sum - (k === y ? 1 : 0)) / batch.size;
      dzs[k] = dz;
      grad[B2 + k]! += dz;
      for (let j = 0; j < HIDDEN; j++) grad[W2 + j * CLASSES + k]! += h[j]! * dz;
    }
    for (let j = 0; j < HIDDEN; j++) {
      let dh = 0;
      for (let k = 0; k < CLASSES; k++) dh += dzs[k]! * p[W2 + j * CLASSES + k]!;
      const dpre = dh * (1 - h[j]! * h[j]!);
      grad[B1 + j]! += dpre;
      for (let i = 0; i < INPUTS; i++) grad[W1 + i * HIDDEN + j]! += x[i]! * dpre;
    }
  }
  return { loss: loss / batch.size, accuracy: correct / batch.size };
}

/** One Adam step on the batch; returns the batch's loss before the step. */
export function trainStep(p: Float64Array, adam: AdamState, batch: Batch): number {
  const grad = new Float64Array(PARAMETER_COUNT);
  const { loss } = evaluate(p, batch, grad);
  adamStep(p, adam, grad, LEARNING_RATE, 'descend');
  return loss;
}
