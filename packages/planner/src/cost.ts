import { PLAN_ASSUMPTIONS as A } from './assumptions.js';
import type { CostBreakdown } from './types.js';

export interface CostInput {
  gpus: number;
  estimatedHours: number;
  rateUsdPerGpuHour: number;
  parameters: number;
  keepLast: number;
}

export interface CostEstimate {
  estimated_cost_usd: number;
  incremental_cost_usd: number;
  cost_breakdown: CostBreakdown;
}

export const roundCents = (usd: number): number => Math.round((usd + Number.EPSILON) * 100) / 100;

/**
 * Compute is every booked GPU for the estimated hours at the booking's rate. The incremental cost is what the
 * run adds beyond the booking: keep_last resumable checkpoints held in object storage for the run's duration,
 * and the egress of the final checkpoint when it leaves for the buyer.
 */
export function estimateCost(c: CostInput): CostEstimate {
  const gpuHours = roundCents(c.estimatedHours * c.gpus);
  const compute = roundCents(gpuHours * c.rateUsdPerGpuHour);
  const checkpointGb = (c.parameters * A.checkpointBytesPerParam) / 1e9;
  const runMonths = c.estimatedHours / A.hoursPerMonth;
  const storage = roundCents(checkpointGb * c.keepLast * A.storageUsdPerGbMonth * runMonths);
  const egress = roundCents(checkpointGb * A.egressUsdPerGb);
  return {
    estimated_cost_usd: compute,
    incremental_cost_usd: roundCents(storage + egress),
    cost_breakdown: {
      gpus: c.gpus,
      gpu_hours: gpuHours,
      rate_usd_per_gpu_hour: c.rateUsdPerGpuHour,
      compute_usd: compute,
      checkpoint_size_gb: Math.round(checkpointGb * 100) / 100,
      checkpoints_kept: c.keepLast,
      storage_usd_per_gb_month: A.storageUsdPerGbMonth,
      run_months: Math.round(runMonths * 10000) / 10000,
      checkpoint_storage_usd: storage,
      egress_gb: Math.round(checkpointGb * 100) / 100,
      egress_usd_per_gb: A.egressUsdPerGb,
      egress_usd: egress,
      egress_what: 'the final checkpoint (weights and optimizer state), once',
    },
  };
}
