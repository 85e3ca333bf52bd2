/**
 * The Adam optimizer both reference trainers use (the pretraining network and the post-training policy), over
 * one flat vector of parameters so that the optimizer and the checkpoints treat every parameter alike.
 */
export interface AdamState {
  /** Steps taken: the bias correction of the moments depends on it. */
  t: number;
  /** First moment (the running mean of the gradient), one per parameter. */
  m: Float64Array;
  /** Second moment (the running mean of the squared gradient), one per parameter. */
  v: Float64Array;
}

export const ADAM_BETAS = { beta1: 0.9, beta2: 0.999, eps: 1e-8 } as const;

export function freshAdamOf(size: number): AdamState {
  return { t: 0, m: new Float64Array(size), v: new Float64Array(size) };
}

/**
 * One Adam step, in place: each parameter moves by `lr` times its bias-corrected first moment over the root of
 * its second. `descend` minimises (a loss: against the gradient), `ascend` maximises (an objective: along it).
 */
export function adamStep(params: Float64Array, adam: AdamState, grad: Float64Array, lr: number, direction: 'descend' | 'ascend'): void {
  const { beta1, beta2, eps } = ADAM_BETAS;
  const sign = direction === 'ascend' ? 1 : -1;
  adam.t++;
  const c1 = 1 - beta1 ** adam.t;
  const c2 = 1 - beta2 ** adam.t;
  for (let i = 0; i < params.length; i++) {
    const g = grad[i]!;
    adam.m[i] = beta1 * adam.m[i]! + (1 - beta1) * g;
    adam.v[i] = beta2 * adam.v[i]! + (1 - beta2) * g * g;
    params[i]! += (sign * (lr * (adam.m[i]! / c1))) / (Math.sqrt(adam.v[i]! / c2) + eps);
  }
}
