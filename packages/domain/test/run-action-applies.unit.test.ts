import { describe, expect, it } from 'vitest';
import { RUN_STATES, isTerminal, type RunState } from '@ito/contracts';
import { checkRunActionCanApply } from '../src/index.js';

const refused = (action: Parameters<typeof checkRunActionCanApply>[0], state: RunState) => {
  try {
    checkRunActionCanApply(action, 'run_1', state);
    return false;
  } catch (err) {
    expect((err as { code: string }).code).toBe('invalid_state');
    return true;
  }
};

describe('checkRunActionCanApply', () => {
  it('a cancel or restart is ruled out once the run ended, is cancelling or is cleaned', () => {
    for (const state of RUN_STATES) {
      const over = isTerminal(state) || ['cleaning_up', 'cleaned'].includes(state);
      expect(refused('run.cancel', state), state).toBe(over || state === 'cancelling');
      expect(refused('run.restart', state), state).toBe(over);
    }
  });

  it('a cleanup or a booking release is ruled out only once the run is cleaned (or being cleaned)', () => {
    for (const state of RUN_STATES) {
      const cleaned = state === 'cleaning_up' || state === 'cleaned';
      expect(refused('run.cleanup', state), state).toBe(cleaned);
      expect(refused('booking.release', state), state).toBe(cleaned);
    }
  });
});
