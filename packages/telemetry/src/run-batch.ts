import { applyRunEvent, type CheckpointTransfer, type Interruption, type RunTelemetry, type TelemetryEvent } from './run-fold.js';
import type { Segment } from './segments.js';

/**
 * How far back of a run's latest event its segments stay in its kept fold state. Older segments are final unless
 * an overlay (a save's stall, a restore, a detection gap) reaches further back, which sends the projection to the
 * run's stored rows (`needs_history`): rare, and exact either way.
 */
export const KEPT_TAIL_MS = 3_600_000;

/** What a batch of a run's events changed of what the projection stores for it. */
export interface RunBatchChanges {
  /** The stored segments starting at or after this instant are replaced: they are `removed`, `segments` follow. */
  replaceSegmentsFrom: number | null;
  removed: Segment[];
  segments: Segment[];
  /** New interruptions and transfers, and earlier interruptions whose resume latency this batch set. */
  interruptions: Interruption[];
  resumed: Interruption[];
  checkpoints: CheckpointTransfer[];
}

export type RunBatch =
  /** The run stores rows (it has a booking and keeps pace with the ledger): what changed, and its kept state. */
  | { kind: 'append'; state: RunTelemetry; changes: RunBatchChanges }
  /** A time-scaled run or one without a booking: no rows, its whole state is kept (the desk reads it from there). */
  | { kind: 'whole'; state: RunTelemetry }
  /** The kept state is not enough: fold again from the state with the run's stored rows put back (historyOf). */
  | { kind: 'needs_history' };

/** Whether a run's time is stored as rows (on the booking's wall timeline) rather than kept whole in its state. */
export function storesRows(s: RunTelemetry): boolean {
  return s.booking_id !== null && s.clock?.time_scaled !== true;
}

const sameSegment = (a: Segment, b: Segment) => a[0] === b[0] && a[1] === b[1] && a[2] === b[2];

/**
 * Folds one batch of a run's events (in ledger order) into its kept state. The kept state of a run that stores
 * rows holds only what later events can still change: the segments of the last hour, the interruption still
 * waiting for its resume, the clock and the mode; everything else is in the projection's rows. Trimming depends
 * only on the state, so any cut of the events into batches gives the same kept state and the same rows.
 */
export function foldRunBatch(stored: RunTelemetry, events: readonly TelemetryEvent[]): RunBatch {
  const s = structuredClone(stored);
  const before = s.segments.map((seg) => [...seg] as Segment);
  const interruptionsBefore = s.interruptions.length;
  const checkpointsBefore = s.checkpoints.length;
  const pending = s.interruptions.filter((i) => i.resume_ms === null);
  for (const e of events) applyRunEvent(s, e);
  const trimmed = s.kept_from !== undefined;
  if (!storesRows(s)) return trimmed ? { kind: 'needs_history' } : { kind: 'whole', state: s };
  if (trimmed && reachedBehindKept(s, before)) return { kind: 'needs_history' };
  let k = 0;
  while (k < before.length && k < s.segments.length && sameSegment(before[k]!, s.segments[k]!)) k++;
  const changes: RunBatchChanges = {
    replaceSegmentsFrom: k < before.length ? before[k]![0] : null,
    removed: before.slice(k),
    segments: s.segments.slice(k).map((seg) => [...seg] as Segment),
    interruptions: s.interruptions.slice(interruptionsBefore),
    // The fold sets resume_ms on the interruption objects themselves: those that were waiting before the batch.
    resumed: pending.filter((i) => i.resume_ms !== null),
    checkpoints: s.checkpoints.slice(checkpointsBefore),
  };
  trimKept(s);
  return { kind: 'append', state: s, changes };
}

/**
 * Whether the batch changed time before the kept segments: segments were dropped from the kept state (kept_from
 * lies past the run's start) and the first kept segment moved or was relabelled (an overlay reached it from
 * behind, or it may now merge with the dropped segment before it).
 */
function reachedBehindKept(s: RunTelemetry, before: readonly Segment[]): boolean {
  if (s.kept_from === null || s.kept_from === undefined || s.started_at === null || s.kept_from <= s.started_at) return false;
  const first = s.segments[0];
  const was = before[0];
  return !first || !was || first[0] !== was[0] || first[2] !== was[2];
}

/** Drops from the state what later events cannot change (stored as rows), in a way that depends on the state only. */
function trimKept(s: RunTelemetry): void {
  const horizon = (s.clock.clock_at ?? s.last_at ?? 0) - KEPT_TAIL_MS;
  const first = s.segments.findIndex((seg) => seg[1] > horizon);
  s.segments = s.segments.slice(first < 0 ? Math.max(0, s.segments.length - 1) : first);
  s.kept_from = s.segments[0]?.[0] ?? null;
  // RunResumed resolves the interruption that put the run in recovery, the last one: the others are final.
  const last = s.interruptions.at(-1);
  s.interruptions = last && last.resume_ms === null ? [last] : [];
  s.checkpoints = [];
}

/** The run's state with its stored rows put back: the whole state, as folding every event from nothing gives it. */
export function historyOf(stored: RunTelemetry, rows: { segments: Segment[]; interruptions: Interruption[]; checkpoints: CheckpointTransfer[] }): RunTelemetry {
  const whole = structuredClone(stored);
  delete whole.kept_from;
  whole.segments = rows.segments;
  whole.interruptions = rows.interruptions;
  whole.checkpoints = rows.checkpoints;
  return whole;
}
