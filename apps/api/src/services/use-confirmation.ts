import { ItoError, type ConfirmationAction } from '@ito/contracts';
import { checkConfirmationUse, type ConfirmationBinding } from '@ito/domain';
import type { LedgerTx, StreamAppend } from '@ito/ledger';
import { consumeConfirmation, getConfirmation, type StoredConfirmation } from '@ito/runs';
import { confirmationStreamId } from './confirmation-service.js';

/**
 * A refusal at the confirmation gate. It is remembered so that, after the transaction rolls back, the refused
 * use can be counted against the reference (five lock it) in a transaction of its own.
 */
export class ConfirmationRefusal extends ItoError {
  constructor(
    inner: ItoError,
    readonly ref: string,
    readonly tenantId: string,
  ) {
    super(inner.code, inner.message, inner.details);
  }
}

function asRefusal(err: unknown, ref: string, tenantId: string): never {
  if (err instanceof ItoError && err.code.startsWith('confirmation_') && err.code !== 'confirmation_not_found') {
    throw new ConfirmationRefusal(err, ref, tenantId);
  }
  throw err;
}

/**
 * A mutation sent without a confirmation reference is told what to do next (`confirmation_required`), not that
 * its body was malformed: the missing reference is the gate's answer, not a shape error.
 */
export function requireConfirmationRef(ref: string | undefined, action: ConfirmationAction, field = 'confirmation_ref'): string {
  if (ref === undefined || ref === '') {
    throw new ItoError(
      'confirmation_required',
      `this call needs an approved ${action} confirmation: request one (POST /v1/confirmations), have an approver approve it, and send its reference as ${field}`,
    );
  }
  return ref;
}

/** Checks that the reference may be used for exactly this binding; refusal codes as in the domain. */
export async function checkConfirmation(tx: LedgerTx, ref: string, wanted: ConfirmationBinding, now: Date) {
  return checkConfirmationRecord(await getConfirmation(tx.client, wanted.tenant_id, ref), ref, wanted, now);
}

/** The same check on a record the caller already read. */
export function checkConfirmationRecord(record: StoredConfirmation | null, ref: string, wanted: ConfirmationBinding, now: Date): StoredConfirmation {
  try {
    checkConfirmationUse(record, wanted, now);
  } catch (err) {
    asRefusal(err, ref, wanted.tenant_id);
  }
  return record!;
}

/**
 * Consumes the reference inside the caller's transaction with one conditional UPDATE, and records the
 * consumption as an event in the same transaction. A concurrent use that lost the race is told why.
 */
export async function consumeInTransaction(tx: LedgerTx, ref: string, wanted: ConfirmationBinding, consumedFor: string, now: Date, actor: string) {
  await consumeRow(tx, ref, wanted, consumedFor, now);
  const consumed = consumedAppend(ref, wanted.tenant_id, consumedFor, actor);
  await tx.append(consumed.streamId, consumed.events, consumed.opts);
}

/** The consumption's event, for a caller that appends it with its own events in one statement (`tx.appendMany`). */
export function consumedAppend(ref: string, tenantId: string, consumedFor: string, actor: string): StreamAppend {
  return {
    streamId: confirmationStreamId(ref),
    events: [{ type: 'ConfirmationConsumed', data: { ref, consumed_for: consumedFor }, metadata: { actor } }],
    opts: { tenantId, expectedVersion: 'any' },
  };
}

/**
 * The conditional UPDATE alone: the reference is consumed for `consumedFor`, or the refusal says why not. The
 * caller appends `consumedAppend` in the same transaction.
 */
export async function consumeRow(tx: LedgerTx, ref: string, wanted: ConfirmationBinding, consumedFor: string, now: Date): Promise<void> {
  const consumed = await consumeConfirmation(tx.client, wanted.tenant_id, ref, consumedFor, now);
  if (!consumed) {
    const record = await getConfirmation(tx.client, wanted.tenant_id, ref);
    try {
      checkConfirmationUse(record, wanted, now);
    } catch (err) {
      asRefusal(err, ref, wanted.tenant_id);
    }
    throw new ItoError('confirmation_consumed', `confirmation ${ref} was already used`);
  }
}
