import { ItoError, type Manifest } from '@ito/contracts';
import { checkBookingUsable, type Booking } from '@ito/domain';
import { planRun, type Plan } from '@ito/planner';
import { getBooking } from '../db/queries.js';
import type { Resources } from '../resources.js';
import { checkManifestOnce } from './accepted-manifests.js';

export interface PlanOutcome {
  plan: Plan;
  estimated_cost_usd: number;
  incremental_cost_usd: number;
  estimated_hours: number;
  cost_breakdown: unknown;
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

/** `POST /v1/plans`: inspection only. It reads; it writes nothing, not even an event. */
export async function previewPlan(res: Resources, tenantId: string, input: { booking_id: string; manifest: string; manifest_digest?: string | undefined }) {
  const now = res.now();
  const booking = checkBookingUsable(await getBooking(res.pool, tenantId, input.booking_id), tenantId, input.booking_id, now);
  const { manifest, digest } = checkManifestOnce(input.manifest, input.manifest_digest);
  const outcome = planFor(manifest, booking, now);
  return { booking_id: booking.booking_id, manifest_digest: digest, ...outcome };
}
