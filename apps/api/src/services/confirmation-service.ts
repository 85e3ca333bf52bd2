import { ItoError, type ConfirmationRequest } from '@ito/contracts';
import {
  DEFAULT_CONFIRMATION_TTL_MS,
  checkBookingUsable,
  checkBudget,
  checkCheckpointStorage,
  checkConfirmationDecision,
  checkRunActionCanApply,
  checkDataPolicy,
  checkSeparateDecider,
  effectiveConfirmationStatus,
  eligibilityBinding,
  type Decider,
} from '@ito/domain';
import type { LedgerTx } from '@ito/ledger';
import { checkManifestOnce, getBooking, getConfirmation, getRun, getTenantPolicy, newId, planFor, saveManifest, type StoredConfirmation } from '@ito/runs';
import type { Resources } from '../resources.js';
import { checkEvalBatteryRegistered } from './eval-battery-gate.js';
import { checkFileRefLinks } from './file-ref-links.js';
import { storedManifestSummary } from './manifest-summary.js';

export function confirmationStreamId(ref: string): string {
  return `confirmation-${ref}`;
}

/**
 * The public view of a confirmation; the approver sees what it is being asked to allow, and who asked. A
 * confirmation past its expiry reads `expired`, whatever it was.
 */
export function confirmationView(c: StoredConfirmation, now: Date) {
  return {
    confirmation_ref: c.ref,
    status: effectiveConfirmationStatus(c, now),
    action: c.action,
    booking_id: c.booking_id,
    run_id: c.run_id,
    manifest_digest: c.manifest_digest,
    cost_usd: c.cost_usd,
    max_incremental_cost_usd: c.max_incremental_cost_usd,
    requested_by: c.requested_by,
    requested_by_principal: c.requested_by_principal,
    decided_by: c.decided_by,
    decided_by_principal: c.decided_by_principal,
    created_at: c.created_at.toISOString(),
    expires_at: c.expires_at.toISOString(),
    decided_at: c.decided_at?.toISOString() ?? null,
    consumed_at: c.consumed_at?.toISOString() ?? null,
    // What the approver is shown beside the bound ceiling: the plan's own estimate of the extra cost and time.
    ...(c.details.incremental_cost_usd !== undefined ? { incremental_cost_usd: c.details.incremental_cost_usd } : {}),
    ...(c.details.estimated_hours !== undefined ? { estimated_hours: c.details.estimated_hours } : {}),
    ...(c.details.plan ? { plan: c.details.plan } : {}),
  };
}

/**
 * `POST /v1/confirmations`: asks for an out-of-band approval. For train.create every gate that does not need
 * the confirmation itself runs first (booking, manifest, data policy, storage, plan, budget), so an approver is
 * never asked to allow something the server would refuse anyway. The reference authorises nothing by itself.
 */
export async function requestConfirmation(res: Resources, tenantId: string, requester: Decider, req: ConfirmationRequest) {
  const requestedBy = requester.keyId;
  const now = res.now();
  const ref = newId('cfm');
  const expiresAt = new Date(now.getTime() + DEFAULT_CONFIRMATION_TTL_MS);
  let binding: { booking_id: string | null; run_id: string | null; manifest_digest: string | null; cost_usd: number; max_incremental_cost_usd: number };
  let details: Record<string, unknown> = {};

  if (req.action === 'train.create') {
    const booking = checkBookingUsable(await getBooking(res.pool, tenantId, req.booking_id), tenantId, req.booking_id, now);
    const { manifest, digest } = checkManifestOnce(req.manifest, req.manifest_digest);
    const policy = await getTenantPolicy(res.pool, tenantId);
    checkDataPolicy(manifest, policy);
    checkCheckpointStorage(manifest, policy);
    await checkEvalBatteryRegistered(res.ledger, manifest.eval.battery);
    await checkFileRefLinks(manifest, policy.file_roots);
    const outcome = planFor(manifest, booking, now);
    checkBudget(manifest, outcome.estimated_cost_usd, outcome.incremental_cost_usd);
    // Last of the gates: it is the one that does I/O on the tenant's storage, so nothing cheaper refuses after it.
    await provenStorage(res, manifest.checkpoint.storage);
    binding = {
      booking_id: booking.booking_id,
      run_id: null,
      manifest_digest: digest,
      cost_usd: outcome.estimated_cost_usd,
      max_incremental_cost_usd: manifest.budget.max_incremental_cost_usd,
    };
    details = {
      eligibility: eligibilityBinding(booking),
      plan: outcome.plan,
      estimated_hours: outcome.estimated_hours,
      incremental_cost_usd: outcome.incremental_cost_usd,
    };
  } else {
    const run = await getRun(res.pool, tenantId, req.run_id);
    if (!run) throw new ItoError('not_found', 'no such run');
    // An approver is never asked to allow what the run's state already rules out (a cancel of an ended run).
    checkRunActionCanApply(req.action, run.run_id, run.state);
    binding = { booking_id: run.booking_id, run_id: run.run_id, manifest_digest: run.manifest_digest, cost_usd: 0, max_incremental_cost_usd: 0 };
  }

  const stored = await res.ledger.transaction(async (tx) => {
    // The approver reviews these exact bytes; the run that consumes the confirmation is bound to their digest.
    if (req.action === 'train.create') await saveManifest(tx.client, tenantId, binding.manifest_digest!, req.manifest);
    const { rows } = await tx.client.query<StoredConfirmation>(
      `insert into confirmations (ref, tenant_id, action, booking_id, run_id, manifest_digest, cost_usd, max_incremental_cost_usd,
         status, requested_by, requested_by_principal, details, created_at, expires_at)
       values ($1,$2,$3,$4,$5,$6,$7,$8,'pending',$9,$10,$11,$12,$13)
       returning *`,
      [ref, tenantId, req.action, binding.booking_id, binding.run_id, binding.manifest_digest, binding.cost_usd, binding.max_incremental_cost_usd,
        requestedBy, requester.principal, JSON.stringify(details), now, expiresAt],
    );
    await tx.append(
      confirmationStreamId(ref),
      [
        {
          type: 'ConfirmationRequested',
          data: { ref, action: req.action, ...binding, requested_by: requestedBy, requested_by_principal: requester.principal, expires_at: expiresAt.toISOString() },
          metadata: { actor: requestedBy },
        },
      ],
      { tenantId, expectedVersion: 'no_stream' },
    );
    return rows[0]!;
  });
  return confirmationView(stored, now);
}

/** The server's own check of the checkpoint storage (see ApiDeps.checkpointStorage), its refusal naming the field. */
async function provenStorage(res: Resources, prefix: string): Promise<void> {
  if (!res.checkpointStorage) return;
  try {
    await res.checkpointStorage(prefix);
  } catch (err) {
    if (err instanceof ItoError) throw new ItoError(err.code, err.message, { path: '$.checkpoint.storage' });
    throw err;
  }
}

/** `GET /v1/confirmations/:ref`: the binding, who asked and decided, and a summary of the manifest it binds. */
export async function showConfirmation(res: Resources, tenantId: string, ref: string) {
  const c = await getConfirmation(res.pool, tenantId, ref);
  if (!c) throw new ItoError('confirmation_not_found', 'no such confirmation reference');
  const manifest = c.manifest_digest ? await storedManifestSummary(res, tenantId, c.manifest_digest) : null;
  return { ...confirmationView(c, res.now()), manifest };
}

/**
 * Approve or deny, by an approver credential of the same tenant, while pending and unexpired, and never by the
 * credential (or the principal) that requested it.
 */
export async function decideConfirmation(res: Resources, tenantId: string, decider: Decider, ref: string, decision: 'approve' | 'deny') {
  const now = res.now();
  const decided = await res.ledger.transaction(async (tx: LedgerTx) => {
    const record = checkConfirmationDecision(await getConfirmation(tx.client, tenantId, ref, { forUpdate: true }), tenantId, now) as StoredConfirmation;
    checkSeparateDecider({ keyId: record.requested_by, principal: record.requested_by_principal }, decider);
    const status = decision === 'approve' ? 'approved' : 'denied';
    const { rows } = await tx.client.query<StoredConfirmation>(
      'update confirmations set status = $3, decided_by = $4, decided_by_principal = $5, decided_at = $6 where tenant_id = $1 and ref = $2 returning *',
      [tenantId, ref, status, decider.keyId, decider.principal, now],
    );
    await tx.append(
      confirmationStreamId(ref),
      [
        {
          type: decision === 'approve' ? 'ConfirmationApproved' : 'ConfirmationDenied',
          data: { ref, decided_by: decider.keyId, decided_by_principal: decider.principal },
          metadata: { actor: decider.keyId },
        },
      ],
      { tenantId, expectedVersion: 'any' },
    );
    return rows[0]!;
  });
  return confirmationView(decided, now);
}
