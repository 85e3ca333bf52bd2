import { ItoError } from '@ito/contracts';
import {
  buildPipeline,
  checkBookingUsable,
  checkBudget,
  checkCheckpointStorage,
  checkDataPolicy,
  decideRun,
  eligibilityBinding,
  initialRunState,
  type ConfirmationBinding,
} from '@ito/domain';
import { canonicalJson } from '@ito/ledger';
import { checkManifestOnce, getTrainContext, newId, newRunAppend, planOrRefusal, type StoredConfirmation } from '@ito/runs';
import { checkEligibilityId } from './booking-service.js';
import type { Resources } from '../resources.js';
import { fingerprintOf, idempotent } from './idempotent.js';
import { checkConfirmationRecord, consumeRow, consumedAppend, requireConfirmationRef } from './use-confirmation.js';

export interface TrainInput {
  booking_id: string;
  manifest: string;
  manifest_digest: string;
  /** Absent or empty is refused at gate 5 as confirmation_required. */
  confirmation_ref?: string | undefined;
  /** Optional: an eligibility the caller looked at; refused as stale if the booking changed since. */
  eligibility_id?: string | undefined;
}

export interface TrainResult {
  run_id: string;
  booking_id: string;
  manifest_digest: string;
  idempotency_key: string;
  confirmation_ref: string;
  state: 'confirmed';
  estimated_cost_usd: number;
  created_at: string;
}

/**
 * `POST /v1/runs`: the gates of docs/design.md ("The gates of train") in order, each failing closed with its own code, and only then
 * ReserveRun + ConfirmRun, the consumed confirmation and the idempotency record in one transaction.
 */
export async function train(res: Resources, tenantId: string, actor: string, key: string, input: TrainInput) {
  const fingerprint = fingerprintOf({ action: 'train.create', ...input });
  return idempotent<TrainResult>(res, tenantId, key, fingerprint, async (tx) => {
    const now = res.now();
    // One read for gates 3, 5 and 6, inside this transaction so nothing changes under the decision.
    const context = await getTrainContext(tx.client, tenantId, input.booking_id, input.confirmation_ref ?? '');
    // Gate 3: the booking.
    const booking = checkBookingUsable(context.booking, tenantId, input.booking_id, now);
    if (input.eligibility_id !== undefined) await checkEligibilityId(res, tenantId, booking.booking_id, input.eligibility_id);
    // Gate 4: the manifest.
    const { manifest, digest } = checkManifestOnce(input.manifest, input.manifest_digest);
    // The plan is computed now because the confirmation is bound to its cost; its refusals belong to gate 6.
    const outcome = planOrRefusal(manifest, booking, now);
    // Gate 5: the confirmation, bound to account, action, booking, digest and cost.
    const wanted: ConfirmationBinding = {
      tenant_id: tenantId,
      action: 'train.create',
      booking_id: booking.booking_id,
      run_id: null,
      manifest_digest: digest,
      cost_usd: outcome instanceof ItoError ? Number.NaN : outcome.estimated_cost_usd,
      max_incremental_cost_usd: manifest.budget.max_incremental_cost_usd,
    };
    const ref = requireConfirmationRef(input.confirmation_ref, 'train.create');
    let record: StoredConfirmation;
    try {
      record = checkConfirmationRecord(context.confirmation, ref, wanted, now);
    } catch (err) {
      // A plan refusal must not hide behind the cost mismatch it caused: report the plan's own code.
      const onlyCost = err instanceof ItoError && err.code === 'confirmation_mismatch' && (err.details?.fields as string[]).join() === 'cost_usd';
      throw outcome instanceof ItoError && onlyCost ? outcome : err;
    }
    // The booking must still be what the approver saw: topology, region, fabric, term.
    const approvedEligibility = record.details.eligibility;
    // Compared canonically: jsonb does not keep key order.
    if (approvedEligibility && canonicalJson(approvedEligibility) !== canonicalJson(eligibilityBinding(booking))) {
      throw new ItoError('eligibility_stale', `booking ${booking.booking_id} changed since the confirmation was requested; request a new confirmation`);
    }
    // Gate 6: server-side validation.
    const policy = context.policy;
    checkDataPolicy(manifest, policy);
    checkCheckpointStorage(manifest, policy);
    if (outcome instanceof ItoError) throw outcome;
    checkBudget(manifest, outcome.estimated_cost_usd, outcome.incremental_cost_usd);

    const runId = newId('run');
    await consumeRow(tx, ref, wanted, runId, now);
    const events = decideRun(
      {
        type: 'ReserveRun',
        data: {
          run_id: runId,
          tenant_id: tenantId,
          booking_id: booking.booking_id,
          manifest_digest: digest,
          idempotency_key: key,
          confirmation_ref: ref,
          estimated_cost_usd: outcome.estimated_cost_usd,
          incremental_cost_usd: outcome.incremental_cost_usd,
          plan: outcome.plan as unknown as Record<string, unknown>,
        },
        pipeline: buildPipeline(manifest, outcome.plan.phases, booking, outcome.plan.parameters),
      },
      initialRunState(),
    );
    // The manifest's bytes were stored under this digest when the confirmation was requested.
    // ConfirmationConsumed and the run's first events in one statement; the run streams' rule applies all the same.
    const [, appended] = await tx.appendMany([consumedAppend(ref, tenantId, runId, actor), newRunAppend(tenantId, runId, events, { actor, idempotencyKey: key })]);
    return {
      run_id: runId,
      booking_id: booking.booking_id,
      manifest_digest: digest,
      idempotency_key: key,
      confirmation_ref: ref,
      state: 'confirmed',
      estimated_cost_usd: outcome.estimated_cost_usd,
      // The recorded time of RunReserved, which the runs projection stores as the run's created_at: one value.
      created_at: appended.events[0]!.recordedAt.toISOString(),
    };
  });
}
