import { ItoError, type Manifest } from '@ito/contracts';
import type { Booking } from '@ito/domain';
import { planRun, type Plan } from '@ito/planner';

export interface PlanOutcome {
  plan: Plan;
  estimated_cost_usd: number;
  incremental_cost_usd: number;
  estimated_hours: number;
  cost_breakdown: unknown;
}

/**
 * The plan, or the planner's refusal as a value: for callers that judge the refusal at a later gate (train's
 * gate 6) or list it beside the others (plan's findings) instead of answering it at once.
 */
export function planOrRefusal(manifest: Manifest, booking: Booking, now: Date): PlanOutcome | ItoError {
  try {
    return planFor(manifest, booking, now);
  } catch (err) {
    if (!(err instanceof ItoError)) throw err;
    return err;
  }
}

/** Runs the pure planner for a manifest on a booking; a refusal becomes its stable code. */
export function planFor(manifest: Manifest, booking: Booking, now: Date): PlanOutcome {
  const result = planRun({
    manifest,
    booking: {
      gpu: booking.gpu,
      nodes: booking.nodes,
      gpusPerNode: booking.gpus_per_node,
      fabric: booking.fabric,
      region: booking.region,
      rateUsdPerGpuHour: booking.rate_usd_per_gpu_hour,
      termStart: booking.term_start,
      termEnd: booking.term_end,
    },
    now,
  });
  if (!result.ok) throw new ItoError(result.code, result.reason);
  return {
    plan: result.plan,
    estimated_cost_usd: result.estimated_cost_usd,
    incremental_cost_usd: result.incremental_cost_usd,
    estimated_hours: result.estimated_hours,
    cost_breakdown: result.cost_breakdown,
  };
}
