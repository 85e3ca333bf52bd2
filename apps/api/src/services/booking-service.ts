import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ItoError } from '@ito/contracts';
import { ELIGIBILITY_TTL_MS, checkBookingExpectation, checkBookingUsable, eligibilityBinding, type Booking, type BookingExpectation } from '@ito/domain';
import { bookingRecord, getBooking, listBookings } from '@ito/runs';
import type { Resources } from '../resources.js';

/** A booking as the API shows it: what its BookingRecorded records, with the account and the term as one object. */
export function bookingView(b: Booking) {
  const { booking_id, term_start, term_end, ...fields } = bookingRecord(b);
  return { booking_id, account_id: b.tenant_id, ...fields, term: { start: term_start, end: term_end } };
}

export async function listBookingViews(res: Resources, tenantId: string) {
  return { bookings: (await listBookings(res.pool, tenantId)).map(bookingView) };
}

export async function showBooking(res: Resources, tenantId: string, bookingId: string) {
  const b = await getBooking(res.pool, tenantId, bookingId);
  if (!b) throw new ItoError('booking_not_found', 'no such booking');
  return bookingView(b);
}

/**
 * An eligibility id is a digest of the bound fields and the expiry, so issuing one writes nothing
 * (inspection creates nothing) and checking one later is a recomputation: any change to the booking's bound
 * fields, or the passing of its expiry, makes it stale.
 */
export function eligibilityId(binding: ReturnType<typeof eligibilityBinding>, expiresAt: Date): string {
  const digest = createHash('sha256').update(JSON.stringify({ binding, expires_at: expiresAt.toISOString() })).digest('hex').slice(0, 32);
  return `elg_${Math.floor(expiresAt.getTime() / 1000).toString(36)}_${digest}`;
}

export async function issueEligibility(res: Resources, tenantId: string, bookingId: string, expect?: BookingExpectation) {
  const now = res.now();
  const booking = checkBookingUsable(await getBooking(res.pool, tenantId, bookingId), tenantId, bookingId, now);
  checkBookingExpectation(booking, expect);
  const binding = eligibilityBinding(booking);
  // Never valid past the booking's own end.
  const expiresAt = new Date(Math.floor(Math.min(now.getTime() + ELIGIBILITY_TTL_MS, booking.term_end.getTime()) / 1000) * 1000);
  return { eligibility_id: eligibilityId(binding, expiresAt), eligible: true, ...binding, issued_at: now.toISOString(), expires_at: expiresAt.toISOString() };
}

const ELIGIBILITY_ID = /^elg_([0-9a-z]{1,13})_[0-9a-f]{32}$/;

/** What an eligibility id looks like; bodies are checked against it before any message may echo one. */
export const eligibilityIdSchema = z.string().regex(ELIGIBILITY_ID, 'expected an eligibility id (elg_…)');

/** Checks an eligibility id against the booking as it is now. */
export async function checkEligibilityId(res: Resources, tenantId: string, bookingId: string, id: string): Promise<void> {
  const now = res.now();
  const booking = checkBookingUsable(await getBooking(res.pool, tenantId, bookingId), tenantId, bookingId, now);
  const m = ELIGIBILITY_ID.exec(id);
  if (!m) throw new ItoError('validation_failed', 'eligibility_id is not of the form elg_…');
  const expiresAt = new Date(parseInt(m[1]!, 36) * 1000);
  if (eligibilityId(eligibilityBinding(booking), expiresAt) !== id) {
    throw new ItoError('eligibility_stale', `eligibility ${id} does not describe booking ${bookingId} as it is now`);
  }
  if (expiresAt.getTime() <= now.getTime()) throw new ItoError('eligibility_stale', `eligibility ${id} expired at ${expiresAt.toISOString()}`);
}
