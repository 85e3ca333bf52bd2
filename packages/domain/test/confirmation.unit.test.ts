import { describe, expect, it } from 'vitest';
import { ItoError } from '@ito/contracts';
import { checkConfirmationUse, type ConfirmationBinding, type ConfirmationRecord } from '@ito/domain';
import { approved, binding, now } from './support/confirmations.js';

function code(record: ConfirmationRecord | null, wanted: ConfirmationBinding = binding): string | null {
  try {
    checkConfirmationUse(record, wanted, now);
    return null;
  } catch (err) {
    if (err instanceof ItoError) return err.code;
    throw err;
  }
}

describe('confirmation use', () => {
  it('an approved, unexpired, matching confirmation may be used', () => expect(code(approved)).toBeNull());
  it('unknown', () => expect(code(null)).toBe('confirmation_not_found'));
  it("another tenant's is unknown", () => expect(code({ ...approved, tenant_id: 'ten_2' })).toBe('confirmation_not_found'));
  it('pending', () => expect(code({ ...approved, status: 'pending' })).toBe('confirmation_pending'));
  it('denied', () => expect(code({ ...approved, status: 'denied' })).toBe('confirmation_denied'));
  it('expired', () => expect(code({ ...approved, expires_at: now })).toBe('confirmation_expired'));
  it('consumed', () => expect(code({ ...approved, status: 'consumed' })).toBe('confirmation_consumed'));
  it('locked after five failed uses, whatever else is true', () => expect(code({ ...approved, failed_uses: 5 })).toBe('confirmation_locked'));
  for (const [field, value] of [
    ['action', 'run.cancel'],
    ['booking_id', 'bkg_2'],
    ['manifest_digest', 'sha256:' + 'b'.repeat(64)],
    ['cost_usd', 3500.2],
    ['max_incremental_cost_usd', 1],
  ] as const) {
    it(`mismatch when ${field} differs`, () => expect(code(approved, { ...binding, [field]: value })).toBe('confirmation_mismatch'));
  }
  it('costs equal to the cent match', () => expect(code(approved, { ...binding, cost_usd: 3500.1200001 })).toBeNull());
});
