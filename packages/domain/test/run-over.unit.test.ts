import { describe, expect, it } from 'vitest';
import { RUN_STATES } from '@ito/contracts';
import { foldRun, initialRunState, isRunOver, isRunOverOrCancelling, type RunAggregate, type RunEvent } from '@ito/domain';
import { RUN, planned, started } from './support/run-history.js';

/** Which states count as over: the four ends and the cleanup after them; cancelling only for the second question. */
const OVER = ['succeeded', 'cancelled', 'gate_failed', 'failed', 'cleaning_up', 'cleaned'];

const at = (status: RunAggregate['status'], terminal: RunAggregate['terminal'] = null) => ({ status, terminal });

describe('isRunOver: the run ended, or its checkpoints are being or were removed', () => {
  it('names exactly the ended and cleanup states over; a run that does not exist is not', () => {
    for (const s of RUN_STATES) expect(isRunOver(at(s)), s).toBe(OVER.includes(s));
    expect(isRunOver(at('none'))).toBe(false);
  });

  it('a recorded end counts whatever the status says', () => {
    expect(isRunOver(at('training', 'failed'))).toBe(true);
  });

  it('follows a real run: running, then failed, then cleaned up', () => {
    const h: RunEvent[] = [...started(planned(), 'pretrain'), { type: 'RunFailed', data: { run_id: RUN, reason: 'x' } }];
    expect(isRunOver(foldRun(started(planned(), 'pretrain')))).toBe(false);
    expect(isRunOver(foldRun(h))).toBe(true);
    const cleaning: RunEvent = { type: 'CleanupStarted', data: { run_id: RUN, confirmation_ref: `cfm_${'6'.repeat(32)}`, to_remove: ['s3://b/1'], release_booking: false } };
    expect(isRunOver(foldRun([...h, cleaning]))).toBe(true);
    expect(isRunOver(initialRunState())).toBe(false);
  });
});

describe('isRunOverOrCancelling: the run`s end is decided', () => {
  it('is isRunOver plus cancelling, and nothing else', () => {
    for (const s of RUN_STATES) expect(isRunOverOrCancelling(at(s)), s).toBe(OVER.includes(s) || s === 'cancelling');
    expect(isRunOverOrCancelling(at('none'))).toBe(false);
    expect(isRunOverOrCancelling(at('awaiting_operator', 'cancelled'))).toBe(true);
  });
});
