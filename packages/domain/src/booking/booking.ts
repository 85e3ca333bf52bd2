import { ItoError, type BookingStatus } from '@ito/contracts';

/** A booking as the desk reports it (the bookings projection). */
export interface Booking {
  booking_id: string;
  tenant_id: string;
  status: BookingStatus;
  gpu: string;
  nodes: number;
  gpus_per_node: number;
  region: string;
  fabric: string;
  term_start: Date;
  term_end: Date;
  rate_usd_per_gpu_hour: number;
  node_inventory: string[];
}

/** How long a freshly issued eligibility stays valid: long enough to plan and confirm, short enough to stay true. */
export const ELIGIBILITY_TTL_MS = 5 * 60 * 1000;

/** The fields an eligibility (and a confirmation) is bound to. */
export interface EligibilityBinding {
  account_id: string;
  booking_id: string;
  topology: { gpu: string; nodes: number; gpus_per_node: number };
  region: string;
  fabric: string;
  term: { start: string; end: string };
}

export function eligibilityBinding(b: Booking): EligibilityBinding {
  return {
    account_id: b.tenant_id,
    booking_id: b.booking_id,
    topology: { gpu: b.gpu, nodes: b.nodes, gpus_per_node: b.gpus_per_node },
    region: b.region,
    fabric: b.fabric,
    term: { start: b.term_start.toISOString(), end: b.term_end.toISOString() },
  };
}

/**
 * The booking gate: the booking exists for this tenant, is completed, its term has begun and not ended.
 * Fails closed with the booking's own code. The entitlement is bound to the term on both sides: a booking not
 * yet begun is refused like an ended one, by plan, eligibility, confirmation and train alike.
 */
export function checkBookingUsable(booking: Booking | null, tenantId: string, bookingId: string, now: Date): Booking {
  if (!booking || booking.tenant_id !== tenantId) throw new ItoError('booking_not_found', 'no such booking'); // never the id asked for: it came from outside
  switch (booking.status) {
    case 'pending':
      throw new ItoError('booking_incomplete', `booking ${bookingId} is not completed yet (status pending)`);
    case 'expired':
      throw new ItoError('booking_expired', `booking ${bookingId} ended at ${booking.term_end.toISOString()}`);
    case 'revoked':
      throw new ItoError('booking_revoked', `booking ${bookingId} was revoked by the desk`);
    case 'released':
      throw new ItoError('booking_released', `booking ${bookingId} was released`);
    case 'completed':
      break;
    default: {
      const never: never = booking.status;
      throw new Error(`unknown booking status ${String(never)}`);
    }
  }
  if (booking.term_end.getTime() <= now.getTime()) {
    throw new ItoError('booking_expired', `booking ${bookingId} ended at ${booking.term_end.toISOString()}`);
  }
  if (booking.term_start.getTime() > now.getTime()) {
    throw new ItoError('booking_not_started', `booking ${bookingId} starts at ${booking.term_start.toISOString()}; it entitles nothing before then`);
  }
  return booking;
}

/** Optional expectations a caller states about a booking; any difference is `booking_mismatch`. */
export interface BookingExpectation {
  gpu?: string | undefined;
  nodes?: number | undefined;
  gpus_per_node?: number | undefined;
  region?: string | undefined;
  fabric?: string | undefined;
}

export function checkBookingExpectation(booking: Booking, expect: BookingExpectation | undefined): void {
  if (!expect) return;
  const diffs: string[] = [];
  for (const key of ['gpu', 'nodes', 'gpus_per_node', 'region', 'fabric'] as const) {
    const want = expect[key];
    if (want !== undefined && want !== booking[key]) diffs.push(key);
  }
  if (diffs.length > 0) {
    throw new ItoError('booking_mismatch', `booking ${booking.booking_id} does not match the expected ${diffs.join(', ')}`, { fields: diffs });
  }
}

/**
 * An issued eligibility must still describe the booking exactly and be unexpired. A booking whose bound fields
 * changed since (topology, region, fabric, term) makes every older eligibility stale.
 */
export function checkEligibilityFresh(
  eligibility: { eligibility_id: string; binding: EligibilityBinding; expires_at: Date },
  booking: Booking,
  now: Date,
): void {
  if (eligibility.binding.booking_id !== booking.booking_id || eligibility.binding.account_id !== booking.tenant_id) {
    throw new ItoError('booking_mismatch', `eligibility ${eligibility.eligibility_id} was issued for another booking`);
  }
  if (eligibility.expires_at.getTime() <= now.getTime()) {
    throw new ItoError('eligibility_stale', `eligibility ${eligibility.eligibility_id} expired at ${eligibility.expires_at.toISOString()}; request a fresh one`);
  }
  if (JSON.stringify(eligibility.binding) !== JSON.stringify(eligibilityBinding(booking))) {
    throw new ItoError('eligibility_stale', `booking ${booking.booking_id} changed since eligibility ${eligibility.eligibility_id} was issued`);
  }
}
