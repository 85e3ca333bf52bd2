import { ItoError, type ConfirmationAction } from '@ito/contracts';
import { decideRun, type ConfirmationBinding, type RunCommand } from '@ito/domain';
import type { LedgerTx } from '@ito/ledger';
import { appendRunEvents, bookingStreamId, getRun, type RunRow } from '@ito/runs';
import type { Resources } from '../resources.js';
import { fingerprintOf, idempotent } from './idempotent.js';
import { checkConfirmation, consumeInTransaction, requireConfirmationRef } from './use-confirmation.js';

export type LifecycleAction = 'cancel' | 'cleanup' | 'restart';

export interface LifecycleInput {
  run_id: string;
  /** Absent or empty is refused as confirmation_required. */
  confirmation_ref?: string | undefined;
  /** cleanup only: release the booking too, which needs its own booking.release confirmation. */
  release_booking?: boolean | undefined;
  release_confirmation_ref?: string | undefined;
}

const ACTION_OF: Record<LifecycleAction, ConfirmationAction> = { cancel: 'run.cancel', cleanup: 'run.cleanup', restart: 'run.restart' };

function bindingFor(run: RunRow, tenantId: string, action: ConfirmationAction): ConfirmationBinding {
  return { tenant_id: tenantId, action, booking_id: run.booking_id, run_id: run.run_id, manifest_digest: run.manifest_digest, cost_usd: 0, max_incremental_cost_usd: 0 };
}

function commandFor(action: LifecycleAction, run: RunRow, ref: string, releaseBooking: boolean): RunCommand {
  switch (action) {
    case 'cancel':
      return { type: 'RequestCancel', data: { run_id: run.run_id, confirmation_ref: ref, workload_started: run.aggregate.stage !== null } };
    case 'cleanup':
      return { type: 'StartCleanup', data: { run_id: run.run_id, confirmation_ref: ref, release_booking: releaseBooking } };
    case 'restart':
      return { type: 'ApproveRestart', data: { run_id: run.run_id, confirmation_ref: ref } };
  }
}

/**
 * `POST /v1/runs/:id/cancel|cleanup|restart`: each its own mutation with its own confirmation action and its own
 * idempotency key. Cleanup never touches the booking unless `release_booking` is set AND a separate
 * booking.release confirmation is consumed in the same transaction.
 */
export async function runLifecycle(res: Resources, tenantId: string, actor: string, key: string, action: LifecycleAction, input: LifecycleInput) {
  const fingerprint = fingerprintOf({ action: ACTION_OF[action], ...input });
  return idempotent(res, tenantId, key, fingerprint, async (tx: LedgerTx) => {
    const now = res.now();
    const run = await getRun(tx.client, tenantId, input.run_id, { forUpdate: true });
    if (!run) throw new ItoError('not_found', 'no such run');
    const binding = bindingFor(run, tenantId, ACTION_OF[action]);
    const ref = requireConfirmationRef(input.confirmation_ref, ACTION_OF[action]);
    await checkConfirmation(tx, ref, binding, now);

    const releaseBooking = action === 'cleanup' && input.release_booking === true;
    const releaseRef = releaseBooking ? requireConfirmationRef(input.release_confirmation_ref, 'booking.release', 'release_confirmation_ref') : null;
    if (releaseRef) await checkConfirmation(tx, releaseRef, bindingFor(run, tenantId, 'booking.release'), now);

    const events = decideRun(commandFor(action, run, ref, releaseBooking), run.aggregate);
    await consumeInTransaction(tx, ref, binding, run.run_id, now, actor);
    if (releaseRef) {
      await consumeInTransaction(tx, releaseRef, bindingFor(run, tenantId, 'booking.release'), run.run_id, now, actor);
      await tx.append(
        bookingStreamId(run.booking_id),
        [{ type: 'BookingStatusChanged', data: { booking_id: run.booking_id, status: 'released', reason: `released by cleanup of run ${run.run_id}` }, metadata: { actor } }],
        { tenantId, expectedVersion: 'any' },
      );
    }
    await appendRunEvents(tx, run, events, { actor, idempotencyKey: key });
    const after = await getRun(tx.client, tenantId, run.run_id);
    return {
      run_id: run.run_id,
      state: after!.state,
      events: events.map((e) => e.type),
      ...(action === 'cleanup' ? { booking_released: releaseBooking, to_remove: run.aggregate.checkpoints.map((c) => c.uri) } : {}),
    };
  });
}
