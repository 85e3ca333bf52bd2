import { describe, expect, it } from 'vitest';
import { ItoError } from '@ito/contracts';
import {
  DEFAULT_CONFIRMATION_TTL_MS,
  MAX_FAILED_USES,
  bindingMismatches,
  checkConfirmationDecision,
  checkConfirmationUse,
  checkNamedKey,
  checkSeparateDecider,
  UNNAMED_KEY_REFUSAL,
  effectiveConfirmationStatus,
  type ConfirmationBinding,
  type ConfirmationRecord,
} from '@ito/domain';
import { approved, binding, now } from './support/confirmations.js';

/**
 * The confirmation rules at their edges: which refusal wins when several hold, the exact instant of expiry, the
 * lock's threshold, what a mismatch names, who may decide, and the status a reader sees. Messages are pinned too:
 * they are what a user reads, and they name the reference, never a secret.
 */
const later = (ms: number) => new Date(now.getTime() + ms);

function refusal(fn: () => unknown): { code: string; message: string; details: unknown } | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (err instanceof ItoError) return { code: err.code, message: err.message, details: err.details };
    throw err;
  }
}
const use = (record: ConfirmationRecord | null, wanted: ConfirmationBinding = binding) => refusal(() => checkConfirmationUse(record, wanted, now));

describe('using a confirmation: which refusal, and what it says', () => {
  it('each refusal names the reference and what to do, never the binding`s values', () => {
    expect(use(null)).toEqual({ code: 'confirmation_not_found', message: 'no such confirmation reference', details: undefined });
    expect(use({ ...approved, failed_uses: MAX_FAILED_USES })!.message).toBe('confirmation cfm_1 is locked after 5 failed uses; request a new one');
    expect(use({ ...approved, status: 'consumed' })!.message).toBe('confirmation cfm_1 was already used');
    expect(use({ ...approved, status: 'denied' })!.message).toBe('confirmation cfm_1 was denied by an approver');
    expect(use({ ...approved, expires_at: now })!.message).toBe('confirmation cfm_1 expired at 2026-12-02T12:00:00.000Z');
    expect(use({ ...approved, status: 'pending' })!.message).toBe('confirmation cfm_1 is waiting for an approver');
  });

  it('lasts ten minutes from its request, as the contract says', () => {
    expect(DEFAULT_CONFIRMATION_TTL_MS).toBe(10 * 60 * 1000);
  });

  it('locks at the fifth failed use, not before', () => {
    expect(MAX_FAILED_USES).toBe(5);
    expect(use({ ...approved, failed_uses: 4 })).toBeNull();
    expect(use({ ...approved, failed_uses: 5 })!.code).toBe('confirmation_locked');
  });

  it('expires at its expiry instant exactly, not a millisecond later', () => {
    expect(use({ ...approved, expires_at: later(1) })).toBeNull();
    expect(use({ ...approved, expires_at: now })!.code).toBe('confirmation_expired');
  });

  it('says consumed or denied even once expired, and expired before pending', () => {
    expect(use({ ...approved, status: 'consumed', expires_at: later(-1) })!.code).toBe('confirmation_consumed');
    expect(use({ ...approved, status: 'denied', expires_at: later(-1) })!.code).toBe('confirmation_denied');
    expect(use({ ...approved, status: 'pending', expires_at: later(-1) })!.code).toBe('confirmation_expired');
    expect(use({ ...approved, status: 'consumed', failed_uses: 5 })!.code).toBe('confirmation_locked');
  });

  it('a mismatch names every field that differs, in a fixed order, and only those', () => {
    const wanted: ConfirmationBinding = { ...binding, action: 'run.cancel', booking_id: 'bkg_2', run_id: 'run_1', manifest_digest: null, cost_usd: 1, max_incremental_cost_usd: 2 };
    const all = ['action', 'booking_id', 'run_id', 'manifest_digest', 'cost_usd', 'max_incremental_cost_usd'];
    expect(use(approved, wanted)).toEqual({
      code: 'confirmation_mismatch',
      message: `confirmation cfm_1 does not match this request (${all.join(', ')} differ)`,
      details: { fields: all },
    });
    expect(bindingMismatches(approved, { ...binding, run_id: 'run_1' })).toEqual(['run_id']);
    expect(bindingMismatches(approved, binding)).toEqual([]);
  });

  it('compares costs to the cent: half a cent apart matches, a cent apart does not', () => {
    expect(bindingMismatches(approved, { ...binding, cost_usd: 3500.124, max_incremental_cost_usd: 4000.004 })).toEqual([]);
    expect(bindingMismatches(approved, { ...binding, cost_usd: 3500.13, max_incremental_cost_usd: 4000.01 })).toEqual(['cost_usd', 'max_incremental_cost_usd']);
  });
});

describe('deciding a confirmation', () => {
  const pending: ConfirmationRecord = { ...approved, status: 'pending' };
  const decide = (record: ConfirmationRecord | null, tenant = 'ten_1', at = now) => refusal(() => checkConfirmationDecision(record, tenant, at));

  it('only a pending, unexpired confirmation of the same tenant can be decided', () => {
    expect(checkConfirmationDecision(pending, 'ten_1', now)).toBe(pending);
    expect(decide(null)!.code).toBe('confirmation_not_found');
    expect(decide(pending, 'ten_2')).toEqual({ code: 'confirmation_not_found', message: 'no such confirmation reference', details: undefined });
    expect(decide(approved)).toEqual({ code: 'invalid_state', message: 'confirmation cfm_1 is approved, not pending', details: undefined });
    expect(decide({ ...pending, expires_at: now })).toEqual({ code: 'confirmation_expired', message: 'confirmation cfm_1 expired at 2026-12-02T12:00:00.000Z', details: undefined });
    expect(decide({ ...pending, expires_at: later(1) })).toBeNull();
  });
});

describe('who may decide', () => {
  it('never the requesting key, nor another key of the requesting principal; anyone else may', () => {
    expect(refusal(() => checkSeparateDecider({ keyId: 'k1', principal: null }, { keyId: 'k1', principal: null }))).toEqual({
      code: 'forbidden',
      message: 'the credential that requested this confirmation cannot decide it; another approver must',
      details: undefined,
    });
    expect(refusal(() => checkSeparateDecider({ keyId: 'k1', principal: 'ops' }, { keyId: 'k2', principal: 'ops' }))).toEqual({
      code: 'forbidden',
      message: 'the principal that requested this confirmation cannot decide it, with any of its keys; another approver must',
      details: undefined,
    });
    expect(refusal(() => checkSeparateDecider({ keyId: 'k1', principal: 'ops' }, { keyId: 'k2', principal: 'audit' }))).toBeNull();
  });

  it('never when either key names no principal: the rule needs two names to compare', () => {
    for (const [requester, decider] of [
      [null, null],
      [null, 'audit'],
      ['ops', null],
    ] as const) {
      const r = refusal(() => checkSeparateDecider({ keyId: 'k1', principal: requester }, { keyId: 'k2', principal: decider }));
      expect(r?.code).toBe('forbidden');
      expect(r?.message).toMatch(/names no principal/);
    }
    expect(refusal(() => checkNamedKey({ keyId: 'k1', principal: null }))).toMatchObject({ code: 'forbidden', message: UNNAMED_KEY_REFUSAL });
    expect(refusal(() => checkNamedKey({ keyId: 'k1', principal: 'ops' }))).toBeNull();
  });
});

describe('the status a reader sees', () => {
  it('reads a pending or approved confirmation past its expiry as expired, and the rest as stored', () => {
    for (const status of ['pending', 'approved'] as const) {
      expect(effectiveConfirmationStatus({ status, expires_at: now }, now)).toBe('expired');
      expect(effectiveConfirmationStatus({ status, expires_at: later(1) }, now)).toBe(status);
    }
    for (const status of ['consumed', 'denied'] as const) expect(effectiveConfirmationStatus({ status, expires_at: later(-1) }, now)).toBe(status);
  });
});
