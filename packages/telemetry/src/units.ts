import { INTERRUPTION_CAUSES } from './causes.js';
import { COVERED_LABELS, type CoveredLabel, type TelemetryUnit } from './figures.js';
import type { CheckpointTransfer, RunTelemetry } from './run-fold.js';
import { clippedMs } from './segments.js';

/** A booking as the desk sold it: where, what, how many nodes, at what rate, for which term (epoch ms). */
export interface BookingFacts {
  booking_id: string;
  region: string;
  fabric: string;
  gpu: string;
  nodes: number;
  gpus_per_node: number;
  rate_usd_per_gpu_hour: number;
  term_start: number;
  term_end: number;
}

/** A half-open window [from, to) in epoch milliseconds. */
export interface TelemetryWindow {
  from: number;
  to: number;
}

/** Bytes per second of one transfer; none for a transfer that took no measurable time. */
export function bandwidthOf(t: CheckpointTransfer): number | null {
  return t.ms > 0 ? t.bytes / (t.ms / 1000) : null;
}

/** What a unit says of its booking: the facts it is grouped and priced by. */
export type UnitBooking = Pick<BookingFacts, 'booking_id' | 'region' | 'fabric' | 'gpu' | 'gpus_per_node' | 'rate_usd_per_gpu_hour'>;

/** A unit with nothing counted yet: every cause and interruption at zero, no transfers, no latencies. */
export function emptyUnit(b: UnitBooking, runId: string | null, bookedNodeMs: number): TelemetryUnit {
  return {
    run_id: runId,
    booking_id: b.booking_id,
    region: b.region,
    fabric: b.fabric,
    gpu: b.gpu,
    gpus_per_node: b.gpus_per_node,
    rate_usd_per_gpu_hour: b.rate_usd_per_gpu_hour,
    booked_node_ms: bookedNodeMs,
    covered_node_ms: Object.fromEntries(COVERED_LABELS.map((l) => [l, 0])) as Record<CoveredLabel, number>,
    interruptions: Object.fromEntries(INTERRUPTION_CAUSES.map((c) => [c, 0])) as TelemetryUnit['interruptions'],
    save_bandwidths: [],
    restore_bandwidths: [],
    detection_ms: [],
    resume_ms: [],
  };
}

function addRun(u: TelemetryUnit, r: RunTelemetry, nodes: number, w: TelemetryWindow): void {
  for (const [start, end, label] of r.segments) {
    if (label === 'idle') continue;
    u.covered_node_ms[label] += clippedMs(start, end, w.from, w.to) * nodes;
  }
  const inWindow = (at: number) => at >= w.from && at < w.to;
  for (const i of r.interruptions) {
    if (!inWindow(i.at)) continue;
    u.interruptions[i.cause] += 1;
    if (i.detection_ms !== null) u.detection_ms.push(i.detection_ms);
    if (i.resume_ms !== null) u.resume_ms.push(i.resume_ms);
  }
  for (const t of r.checkpoints) {
    const bw = inWindow(t.at) ? bandwidthOf(t) : null;
    if (bw !== null) (t.kind === 'save' ? u.save_bandwidths : u.restore_bandwidths).push(bw);
  }
}

/**
 * The units of a window, straight from folded runs: one per booking (its term is the booked time, what its
 * runs did not cover is idle), or one per run when `perRun` (the run's own span is the booked time).
 */
export function unitsOf(bookings: readonly BookingFacts[], runs: readonly RunTelemetry[], w: TelemetryWindow, perRun: boolean): TelemetryUnit[] {
  const byId = new Map(bookings.map((b) => [b.booking_id, b]));
  if (perRun) {
    const units: TelemetryUnit[] = [];
    for (const r of runs) {
      const b = r.booking_id ? byId.get(r.booking_id) : undefined;
      if (!b || r.started_at === null) continue;
      const end = r.ended_at ?? r.last_at ?? r.started_at;
      const span = clippedMs(r.started_at, end, w.from, w.to);
      if (span === 0) continue;
      const u = emptyUnit(b, r.run_id, span * b.nodes);
      addRun(u, r, b.nodes, w);
      units.push(u);
    }
    return units;
  }
  const units = new Map<string, TelemetryUnit>();
  for (const b of bookings) {
    const booked = clippedMs(b.term_start, b.term_end, w.from, w.to) * b.nodes;
    if (booked > 0) units.set(b.booking_id, emptyUnit(b, null, booked));
  }
  for (const r of runs) {
    const b = r.booking_id ? byId.get(r.booking_id) : undefined;
    if (!b) continue;
    const u = units.get(b.booking_id) ?? emptyUnit(b, null, 0);
    addRun(u, r, b.nodes, w);
    units.set(b.booking_id, u);
  }
  return [...units.values()];
}

/**
 * Time-scaled runs (run-clock.ts), each whole and on its own clock: one unit per run whose booked time is its
 * span on that clock (its segments cover it end to end, so nothing is idle). The desk shows these apart from the
 * fleet: their hours are modelled, not hours any booking was used for.
 */
export function timeScaledUnitsOf(bookings: readonly BookingFacts[], runs: readonly RunTelemetry[]): TelemetryUnit[] {
  const byId = new Map(bookings.map((b) => [b.booking_id, b]));
  const whole = { from: -Infinity, to: Infinity };
  const units: TelemetryUnit[] = [];
  for (const r of runs) {
    const b = r.booking_id ? byId.get(r.booking_id) : undefined;
    if (!b || r.started_at === null || !r.clock?.time_scaled) continue;
    const span = Math.max(0, (r.clock.clock_at ?? r.started_at) - r.started_at);
    const u = emptyUnit(b, r.run_id, span * b.nodes);
    addRun(u, r, b.nodes, whole);
    units.push(u);
  }
  return units;
}
