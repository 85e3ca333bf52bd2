import { describe, expect, it } from 'vitest';
import { ItoError } from '@ito/contracts';
import { ELIGIBILITY_TTL_MS, checkBookingExpectation, checkBookingUsable, checkEligibilityFresh, eligibilityBinding, type Booking } from '@ito/domain';

function code(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (err instanceof ItoError) return err.code;
    throw err;
  }
}

/** The refusal `fn` throws, for its code, message and details. */
function refusal(fn: () => unknown): ItoError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ItoError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('booking gate', () => {
  const now = new Date('2026-12-02T12:00:00Z');
  const booking: Booking = {
    booking_id: 'bkg_1',
    tenant_id: 'ten_1',
    status: 'completed',
    gpu: 'h200',
    nodes: 2,
    gpus_per_node: 8,
    region: 'us-east-1',
    fabric: 'infiniband',
    term_start: new Date('2026-12-01T00:00:00Z'),
    term_end: new Date('2026-12-31T00:00:00Z'),
    rate_usd_per_gpu_hour: 2.5,
    node_inventory: [],
  };
  const gate = (b: Booking | null, tenant = 'ten_1') => code(() => checkBookingUsable(b, tenant, 'bkg_1', now));
  it('a completed booking in term passes', () => expect(gate(booking)).toBeNull());
  it('missing or another tenant', () => {
    expect(gate(null)).toBe('booking_not_found');
    expect(gate(booking, 'ten_2')).toBe('booking_not_found');
  });
  it('each status fails closed with its own code', () => {
    expect(gate({ ...booking, status: 'pending' })).toBe('booking_incomplete');
    expect(gate({ ...booking, status: 'expired' })).toBe('booking_expired');
    expect(gate({ ...booking, status: 'revoked' })).toBe('booking_revoked');
    expect(gate({ ...booking, status: 'released' })).toBe('booking_released');
  });
  it('a term that has ended is expired even if the desk has not said so', () => expect(gate({ ...booking, term_end: now })).toBe('booking_expired'));
  it('a term that has not begun entitles nothing yet; its first instant does', () => {
    expect(gate({ ...booking, term_start: new Date(now.getTime() + 1) })).toBe('booking_not_started');
    expect(gate({ ...booking, term_start: now })).toBeNull();
  });
});

const NOW = new Date('2026-12-02T12:00:00Z');
const BOOKING: Booking = {
  booking_id: 'bkg_1',
  tenant_id: 'ten_1',
  status: 'completed',
  gpu: 'h200',
  nodes: 2,
  gpus_per_node: 8,
  region: 'us-east-1',
  fabric: 'infiniband',
  term_start: new Date('2026-12-01T00:00:00Z'),
  term_end: new Date('2026-12-31T00:00:00Z'),
  rate_usd_per_gpu_hour: 2.5,
  node_inventory: ['node_a'],
};

describe('booking gate: what a refusal says', () => {
  const usable = (b: Booking | null, tenant = 'ten_1') => refusal(() => checkBookingUsable(b, tenant, 'bkg_asked', NOW));

  it('returns the booking itself when it is usable', () => {
    expect(checkBookingUsable(BOOKING, 'ten_1', 'bkg_1', NOW)).toBe(BOOKING);
  });

  it('a missing booking never echoes the id asked for', () => {
    expect(usable(null).message).toBe('no such booking');
    expect(usable(BOOKING, 'ten_2').message).toBe('no such booking');
  });

  it('each status names the booking and what is wrong with it', () => {
    expect(usable({ ...BOOKING, status: 'pending' }).message).toBe('booking bkg_asked is not completed yet (status pending)');
    expect(usable({ ...BOOKING, status: 'expired' }).message).toBe('booking bkg_asked ended at 2026-12-31T00:00:00.000Z');
    expect(usable({ ...BOOKING, status: 'revoked' }).message).toBe('booking bkg_asked was revoked by the desk');
    expect(usable({ ...BOOKING, status: 'released' }).message).toBe('booking bkg_asked was released');
  });

  it('a term that ended one instant ago is expired, with its end; one that ends one instant later is not', () => {
    const ended = usable({ ...BOOKING, term_end: new Date(NOW.getTime() - 1) });
    expect(ended.code).toBe('booking_expired');
    expect(ended.message).toBe('booking bkg_asked ended at 2026-12-02T11:59:59.999Z');
    expect(code(() => checkBookingUsable({ ...BOOKING, term_end: new Date(NOW.getTime() + 1) }, 'ten_1', 'bkg_1', NOW))).toBeNull();
  });

  it('a term not begun says when it starts', () => {
    const early = usable({ ...BOOKING, term_start: new Date(NOW.getTime() + 60_000) });
    expect(early.code).toBe('booking_not_started');
    expect(early.message).toBe('booking bkg_asked starts at 2026-12-02T12:01:00.000Z; it entitles nothing before then');
  });

  it('an unknown status (a desk newer than this code) is refused, not let through', () => {
    const odd = { ...BOOKING, status: 'frozen' } as unknown as Booking;
    expect(() => checkBookingUsable(odd, 'ten_1', 'bkg_1', NOW)).toThrow('unknown booking status frozen');
  });
});

describe('eligibility binding', () => {
  it('binds the account, the booking, its topology, region, fabric and term, and nothing else', () => {
    expect(eligibilityBinding(BOOKING)).toEqual({
      account_id: 'ten_1',
      booking_id: 'bkg_1',
      topology: { gpu: 'h200', nodes: 2, gpus_per_node: 8 },
      region: 'us-east-1',
      fabric: 'infiniband',
      term: { start: '2026-12-01T00:00:00.000Z', end: '2026-12-31T00:00:00.000Z' },
    });
  });

  it('lasts five minutes once issued', () => expect(ELIGIBILITY_TTL_MS).toBe(300_000));
});

describe('booking expectation', () => {
  const mismatch = (expect: Parameters<typeof checkBookingExpectation>[1]) => refusal(() => checkBookingExpectation(BOOKING, expect));

  it('no expectation, or one the booking meets field by field, passes', () => {
    expect(code(() => checkBookingExpectation(BOOKING, undefined))).toBeNull();
    expect(code(() => checkBookingExpectation(BOOKING, {}))).toBeNull();
    expect(code(() => checkBookingExpectation(BOOKING, { gpu: 'h200', nodes: 2, gpus_per_node: 8, region: 'us-east-1', fabric: 'infiniband' }))).toBeNull();
  });

  it('every field that differs is named, in a fixed order, in the message and the details', () => {
    const all = mismatch({ gpu: 'a100', nodes: 4, gpus_per_node: 4, region: 'eu-west-1', fabric: 'ethernet' });
    expect(all.code).toBe('booking_mismatch');
    expect(all.message).toBe('booking bkg_1 does not match the expected gpu, nodes, gpus_per_node, region, fabric');
    expect(all.details).toEqual({ fields: ['gpu', 'nodes', 'gpus_per_node', 'region', 'fabric'] });
  });

  it('each field alone is checked, and only the one that differs is named', () => {
    expect(mismatch({ gpu: 'a100', nodes: 2 }).details).toEqual({ fields: ['gpu'] });
    expect(mismatch({ nodes: 3 }).details).toEqual({ fields: ['nodes'] });
    expect(mismatch({ gpus_per_node: 4 }).details).toEqual({ fields: ['gpus_per_node'] });
    expect(mismatch({ region: 'eu-west-1' }).details).toEqual({ fields: ['region'] });
    expect(mismatch({ fabric: 'roce' }).details).toEqual({ fields: ['fabric'] });
  });
});

describe('eligibility freshness', () => {
  const issued = { eligibility_id: 'elg_1', binding: eligibilityBinding(BOOKING), expires_at: new Date(NOW.getTime() + ELIGIBILITY_TTL_MS) };
  const fresh = (e: typeof issued, b: Booking = BOOKING, now: Date = NOW) => refusal(() => checkEligibilityFresh(e, b, now));

  it('an eligibility issued for this booking, unexpired and unchanged, is fresh', () => {
    expect(code(() => checkEligibilityFresh(issued, BOOKING, NOW))).toBeNull();
    expect(code(() => checkEligibilityFresh(issued, BOOKING, new Date(issued.expires_at.getTime() - 1)))).toBeNull();
  });

  it('one issued for another booking or another account is a mismatch, before its age is looked at', () => {
    const other = fresh({ ...issued, binding: { ...issued.binding, booking_id: 'bkg_2' }, expires_at: new Date(0) });
    expect(other.code).toBe('booking_mismatch');
    expect(other.message).toBe('eligibility elg_1 was issued for another booking');
    expect(fresh({ ...issued, binding: { ...issued.binding, account_id: 'ten_2' } }).code).toBe('booking_mismatch');
  });

  it('expires at its expiry instant, not one later', () => {
    const stale = fresh(issued, BOOKING, issued.expires_at);
    expect(stale.code).toBe('eligibility_stale');
    expect(stale.message).toBe('eligibility elg_1 expired at 2026-12-02T12:05:00.000Z; request a fresh one');
  });

  it('is stale once any bound field of the booking changed since it was issued', () => {
    for (const changed of [
      { ...BOOKING, gpu: 'b200' },
      { ...BOOKING, nodes: 3 },
      { ...BOOKING, gpus_per_node: 4 },
      { ...BOOKING, region: 'eu-west-1' },
      { ...BOOKING, fabric: 'roce' },
      { ...BOOKING, term_start: new Date('2026-12-01T01:00:00Z') },
      { ...BOOKING, term_end: new Date('2026-12-30T00:00:00Z') },
    ]) {
      const stale = fresh(issued, changed);
      expect(stale.code).toBe('eligibility_stale');
      expect(stale.message).toBe('booking bkg_1 changed since eligibility elg_1 was issued');
    }
  });

  it('fields not bound (the rate, the node inventory) do not make it stale', () => {
    expect(code(() => checkEligibilityFresh(issued, { ...BOOKING, rate_usd_per_gpu_hour: 3, node_inventory: [] }, NOW))).toBeNull();
  });
});
