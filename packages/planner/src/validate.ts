import type { BookingTopology } from './types.js';

const isInt = (v: unknown, min: number, max: number): boolean => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;
const isDate = (v: unknown): v is Date => v instanceof Date && !Number.isNaN(v.getTime());

/**
 * Checks a booking topology and clock before planning; returns every problem, empty when the request is sound.
 * Bookings come from the ledger, but a plan must never be computed from a NaN rate or a term that ends before
 * it starts.
 */
export function validatePlanRequest(booking: BookingTopology, now: Date): string[] {
  const problems: string[] = [];
  if (typeof booking.gpu !== 'string' || booking.gpu.length === 0) problems.push('booking.gpu must name a GPU model');
  if (typeof booking.fabric !== 'string' || booking.fabric.length === 0) problems.push('booking.fabric must name a fabric');
  if (!isInt(booking.nodes, 1, 4096)) problems.push('booking.nodes must be an integer from 1 to 4096');
  if (!isInt(booking.gpusPerNode, 1, 72)) problems.push('booking.gpusPerNode must be an integer from 1 to 72');
  if (!Number.isFinite(booking.rateUsdPerGpuHour) || booking.rateUsdPerGpuHour < 0) problems.push('booking.rateUsdPerGpuHour must be a non-negative number');
  if (!isDate(booking.termStart) || !isDate(booking.termEnd)) problems.push('booking term start and end must be valid instants');
  else if (booking.termEnd.getTime() <= booking.termStart.getTime()) problems.push('booking term must end after it starts');
  if (!isDate(now)) problems.push('now must be a valid instant');
  return problems;
}
