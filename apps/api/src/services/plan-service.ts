import { ItoError } from '@ito/contracts';
import { checkBookingUsable, foreseePlanGates } from '@ito/domain';
import { checkManifestOnce, getBooking, getTenantPolicy, planOrRefusal, type PlanOutcome } from '@ito/runs';
import type { Resources } from '../resources.js';

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
