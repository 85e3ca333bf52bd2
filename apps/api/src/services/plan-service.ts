import { ItoError, type Manifest } from '@ito/contracts';
import { checkBookingUsable, foreseePlanGates, type Booking } from '@ito/domain';
import { planRun, type Plan } from '@ito/planner';
import { getBooking, getTenantPolicy } from '../db/queries.js';
import type { Resources } from '../resources.js';
import { checkManifestOnce } from './accepted-manifests.js';

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

/**
 * `POST /v1/plans`: inspection only. It reads; it writes nothing, not even an event. Beside the plan it reports
 * every gate a confirmation and train would apply that it can foresee (`findings`); when one would refuse, it
 * answers that gate's own code, with every finding (and the estimate, when there is one) in the details.
 */
export async function previewPlan(res: Resources, tenantId: string, input: { booking_id: string; manifest: string; manifest_digest?: string | undefined }) {
  const now = res.now();
  const booking = checkBookingUsable(await getBooking(res.pool, tenantId, input.booking_id), tenantId, input.booking_id, now);
  const { manifest, digest } = checkManifestOnce(input.manifest, input.manifest_digest);
  const policy = await getTenantPolicy(res.pool, tenantId);
  const outcome = planOrRefusal(manifest, booking, now);
  const findings = foreseePlanGates(manifest, policy, outcome instanceof ItoError ? { ok: false, code: outcome.code, reason: outcome.message } : { ok: true, ...outcome });
  const refusals = findings.filter((f) => f.status === 'refused');
  const first = refusals[0];
  if (first && first.status === 'refused') {
    const estimate = outcome instanceof ItoError ? {} : { estimated_cost_usd: outcome.estimated_cost_usd, incremental_cost_usd: outcome.incremental_cost_usd, estimated_hours: outcome.estimated_hours };
    const more = refusals.length > 1 ? ` (and ${refusals.length - 1} more of ${findings.length} gates)` : '';
    throw new ItoError(first.code, `this plan would be refused at the ${first.gate} gate: ${first.message}${more}`, { findings, ...estimate });
  }
  return { booking_id: booking.booking_id, manifest_digest: digest, ...(outcome as PlanOutcome), findings };
}
