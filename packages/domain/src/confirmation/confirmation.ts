import { ItoError, type ConfirmationAction } from '@ito/contracts';

/** After this many failed uses a reference is locked for good, so a leaked ref cannot be probed. */
export const MAX_FAILED_USES = 5;
export const DEFAULT_CONFIRMATION_TTL_MS = 10 * 60 * 1000;

export type ConfirmationStatus = 'pending' | 'approved' | 'denied' | 'consumed';

/** What a confirmation is bound to; every field must match at use. */
export interface ConfirmationBinding {
  tenant_id: string;
  action: ConfirmationAction;
  booking_id: string | null;
  run_id: string | null;
  manifest_digest: string | null;
  cost_usd: number;
  max_incremental_cost_usd: number;
}

export interface ConfirmationRecord extends ConfirmationBinding {
  ref: string;
  status: ConfirmationStatus;
  expires_at: Date;
  failed_uses: number;
}

/**
 * Decides whether a confirmation may be used for the action described by `wanted`, at `now`.
 * Returns nothing when it may; throws the stable refusal otherwise. Order matters: a locked ref says
 * locked whatever else is true of it, and a consumed one says consumed even once expired.
 */
export function checkConfirmationUse(record: ConfirmationRecord | null, wanted: ConfirmationBinding, now: Date): void {
  if (!record || record.tenant_id !== wanted.tenant_id) {
    throw new ItoError('confirmation_not_found', 'no such confirmation reference');
  }
  if (record.failed_uses >= MAX_FAILED_USES) {
    throw new ItoError('confirmation_locked', `confirmation ${record.ref} is locked after ${MAX_FAILED_USES} failed uses; request a new one`);
  }
  if (record.status === 'consumed') throw new ItoError('confirmation_consumed', `confirmation ${record.ref} was already used`);
  if (record.status === 'denied') throw new ItoError('confirmation_denied', `confirmation ${record.ref} was denied by an approver`);
  if (record.expires_at.getTime() <= now.getTime()) {
    throw new ItoError('confirmation_expired', `confirmation ${record.ref} expired at ${record.expires_at.toISOString()}`);
  }
  if (record.status === 'pending') throw new ItoError('confirmation_pending', `confirmation ${record.ref} is waiting for an approver`);
  const mismatched = bindingMismatches(record, wanted);
  if (mismatched.length > 0) {
    throw new ItoError('confirmation_mismatch', `confirmation ${record.ref} does not match this request (${mismatched.join(', ')} differ)`, {
      fields: mismatched,
    });
  }
}

/** Names the bound fields that differ. Costs compare in cents so float noise never decides. */
export function bindingMismatches(a: ConfirmationBinding, b: ConfirmationBinding): string[] {
  const out: string[] = [];
  if (a.action !== b.action) out.push('action');
  if (a.booking_id !== b.booking_id) out.push('booking_id');
  if (a.run_id !== b.run_id) out.push('run_id');
  if (a.manifest_digest !== b.manifest_digest) out.push('manifest_digest');
  if (cents(a.cost_usd) !== cents(b.cost_usd)) out.push('cost_usd');
  if (cents(a.max_incremental_cost_usd) !== cents(b.max_incremental_cost_usd)) out.push('max_incremental_cost_usd');
  return out;
}

function cents(usd: number): number {
  return Math.round(usd * 100);
}

/** Approve or deny: only a pending, unexpired confirmation can be decided. */
export function checkConfirmationDecision(record: ConfirmationRecord | null, tenantId: string, now: Date): ConfirmationRecord {
  if (!record || record.tenant_id !== tenantId) throw new ItoError('confirmation_not_found', 'no such confirmation reference');
  if (record.status !== 'pending') throw new ItoError('invalid_state', `confirmation ${record.ref} is ${record.status}, not pending`);
  if (record.expires_at.getTime() <= now.getTime()) {
    throw new ItoError('confirmation_expired', `confirmation ${record.ref} expired at ${record.expires_at.toISOString()}`);
  }
  return record;
}

/** Who asks for or decides a confirmation: the key, and the principal holding it when the operator named one. */
export interface Decider {
  keyId: string;
  principal: string | null;
}

/** Why a key that names no principal may neither request nor decide: the separation rule needs two names. */
export const UNNAMED_KEY_REFUSAL =
  'this key names no principal, and a key that requests or decides confirmations must: ask the operator for a key made with --principal <who>';

/**
 * A key that may request or decide a confirmation must name the principal holding it: with no name, one person
 * holding a requester key and an approver key would be two strangers to the separation rule.
 */
export function checkNamedKey(key: Decider): asserts key is Decider & { principal: string } {
  if (key.principal === null) throw new ItoError('forbidden', UNNAMED_KEY_REFUSAL);
}

/**
 * Out-of-band separation: the credential that requested a confirmation may not approve or deny it, and no key of
 * the requesting principal may either. Otherwise one holder of both scopes could authorise their own spending.
 * Both keys must name their principals, so the rule always has two names to compare (a confirmation requested
 * by an unnamed key, before keys had to be named, can be decided by no one: it is requested again).
 */
export function checkSeparateDecider(requester: Decider, decider: Decider): void {
  if (requester.keyId === decider.keyId) {
    throw new ItoError('forbidden', 'the credential that requested this confirmation cannot decide it; another approver must');
  }
  checkNamedKey(decider);
  if (requester.principal === null) {
    throw new ItoError('forbidden', 'this confirmation was requested by a key that names no principal, so no one can be shown to be another person: request it again with a named key');
  }
  if (requester.principal === decider.principal) {
    throw new ItoError('forbidden', 'the principal that requested this confirmation cannot decide it, with any of its keys; another approver must');
  }
}

/** The status a reader sees: a pending or approved confirmation past its expiry reads `expired`. */
export function effectiveConfirmationStatus(record: Pick<ConfirmationRecord, 'status' | 'expires_at'>, now: Date): ConfirmationStatus | 'expired' {
  if ((record.status === 'pending' || record.status === 'approved') && record.expires_at.getTime() <= now.getTime()) return 'expired';
  return record.status;
}
