import type { ConfirmationBinding, ConfirmationRecord } from '@ito/domain';

/** One approved train.create confirmation and the binding it was approved for, as of `now`. */
export const now = new Date('2026-12-02T12:00:00Z');
export const binding: ConfirmationBinding = {
  tenant_id: 'ten_1',
  action: 'train.create',
  booking_id: 'bkg_1',
  run_id: null,
  manifest_digest: 'sha256:' + 'a'.repeat(64),
  cost_usd: 3500.12,
  max_incremental_cost_usd: 4000,
};
export const approved: ConfirmationRecord = { ...binding, ref: 'cfm_1', status: 'approved', expires_at: new Date(now.getTime() + 60_000), failed_uses: 0 };
