import type { GateBound } from './pipeline.js';

export interface GateVerdict {
  passed: boolean;
  /** One plain sentence per failed bound, e.g. `mmlu 0.41 < min 0.55`, or `mmlu was not reported`. */
  failed: string[];
}

/**
 * Compares an evaluation's scores with a stage's gates. A metric the battery did not report fails its gate:
 * a gate is never passed for want of a number.
 */
export function evaluateGates(gates: Record<string, GateBound>, metrics: Record<string, number>): GateVerdict {
  const failed: string[] = [];
  for (const [name, bound] of Object.entries(gates)) {
    const value = Object.hasOwn(metrics, name) ? metrics[name] : undefined;
    if (value === undefined || !Number.isFinite(value)) {
      failed.push(`${name} was not reported`);
      continue;
    }
    if (bound.min !== undefined && value < bound.min) failed.push(`${name} ${value} < min ${bound.min}`);
    if (bound.max !== undefined && value > bound.max) failed.push(`${name} ${value} > max ${bound.max}`);
  }
  return { passed: failed.length === 0, failed };
}
