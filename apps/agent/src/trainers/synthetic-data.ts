import { Random } from './random.js';

/**
 * The reference trainer's data: a fixed mixture of Gaussians. Each of `classes` classes has a centre drawn once
 * from a fixed seed; an example is a class drawn uniformly and its centre plus unit Gaussian noise. The classes
 * overlap, so no model reaches zero loss, and a small network can learn most of the structure in seconds.
 */
export const INPUTS = 8;
export const CLASSES = 4;
const CENTRE_SPREAD = 0.8;

export interface Batch {
  x: Float64Array;
  y: Int32Array;
  size: number;
}

const CENTRES: Float64Array = (() => {
  const rng = Random.fromSeed('ito-reference-data/centres');
  const centres = new Float64Array(CLASSES * INPUTS);
  for (let i = 0; i < centres.length; i++) centres[i] = CENTRE_SPREAD * rng.normal();
  return centres;
})();

/** Draws a batch from `rng`; the same generator state always gives the same batch. */
export function drawBatch(rng: Random, size: number): Batch {
  const x = new Float64Array(size * INPUTS);
  const y = new Int32Array(size);
  for (let b = 0; b < size; b++) {
    const c = rng.int(CLASSES);
    y[b] = c;
    for (let i = 0; i < INPUTS; i++) x[b * INPUTS + i] = CENTRES[c * INPUTS + i]! + rng.normal();
  }
  return { x, y, size };
}

/** The held-out set: fixed, and never drawn from a training stream. */
export function heldOutSet(size = 2048): Batch {
  return drawBatch(Random.fromSeed('ito-reference-data/held-out'), size);
}
