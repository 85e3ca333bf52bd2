/**
 * The clock a run's time is accounted on. A run whose executor keeps pace with the ledger is accounted in wall
 * time. A time-scaled run (the simulated executor at `ITO_TIME_SCALE`: 80 modelled hours of training in half a
 * minute) is accounted in its modelled time: training advances the run's clock as far as the executor's own
 * clock says it trained, while the control plane's part (planning, detection, resume, approvals, the gaps
 * between stages) advances it by the wall time it took. Set against wall time, such a run would be a minute of
 * work on a month of booking; on its own clock its figures read as the run it models.
 */

/** An executor clock that ran at least this many times faster than the ledger's is a time-scaled one. */
export const TIME_SCALED_PACE = 2;

/** The latest reading of the executor's clock for the stage attempt that is running. */
export interface ExecutorReading {
  stage: string;
  attempt: number;
  /** When the attempt started, on the wall clock and on the run's clock. */
  started_wall: number;
  started_clock: number;
  /** The executor's elapsed milliseconds at its latest reading (null before the first), and the run's clock then. */
  elapsed_ms: number | null;
  clock_at: number;
}

/** Where a run's clock stands; plain JSON, kept in the run's fold state. */
export interface RunClock {
  /** The run's clock at its latest event (equal to the wall time while it is not time-scaled). */
  clock_at: number | null;
  /** Modelled seconds per wall second, as last measured over the running attempt; 1 until measured. */
  pace: number;
  /** Sticky: once the executor's clock is seen running at TIME_SCALED_PACE or faster. */
  time_scaled: boolean;
  reading: ExecutorReading | null;
}

export function startingClock(at: number | null = null): RunClock {
  return { clock_at: at, pace: 1, time_scaled: false, reading: null };
}

/**
 * What an event says of the executor's clock: milliseconds the executor has spent on the attempt since its task
 * started (a progress report's or a completion's `elapsed_s`; a restore's `restore_seconds`, the first thing a
 * resumed task does), for the stage and attempt it names. Null for any other event.
 */
export function executorElapsedMs(e: { type: string; data: Record<string, unknown> }): { stage: string; attempt: number; ms: number } | null {
  const seconds = e.type === 'CheckpointRestored' ? e.data.restore_seconds : e.type === 'ProgressRecorded' || e.type === 'TaskCompleted' ? e.data.elapsed_s : undefined;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0 || typeof e.data.stage !== 'string') return null;
  const attempt = typeof e.data.attempt === 'number' && Number.isInteger(e.data.attempt) ? e.data.attempt : 1;
  return { stage: e.data.stage, attempt, ms: seconds * 1000 };
}

/**
 * Moves the run's clock to an event at wall time `at` (the previous event was at `lastWall`) and returns where
 * the clock now stands. `executorRunning` is true while training steps run, when the time since the last event
 * passed at the executor's pace. A reading of the executor's clock for the running attempt brings the run's
 * clock to exactly where the executor says it is (never backwards).
 */
export function advanceClock(c: RunClock, lastWall: number, at: number, executorRunning: boolean, e: { type: string; data: Record<string, unknown> }): number {
  const from = c.clock_at ?? lastWall;
  const wall = Math.max(0, at - lastWall);
  const r = c.reading;
  const elapsed = executorElapsedMs(e);
  const reads = elapsed !== null && r !== null && elapsed.stage === r.stage && elapsed.attempt === r.attempt;
  if (reads) {
    // The pace since the attempt started: a lower bound (the task starts after its stage does), so a delayed or
    // batched report can only make it look slower, never faster.
    const sinceStart = at - r.started_wall;
    if (sinceStart > 0) c.pace = Math.max(1, elapsed.ms / sinceStart);
    if (c.pace >= TIME_SCALED_PACE) c.time_scaled = true;
  }
  let to = from + (c.time_scaled && executorRunning ? wall * c.pace : wall);
  if (c.time_scaled && reads) {
    // The executor's own account: from its previous reading, or from the attempt's start plus the wall time
    // before the task began (what the start took beyond the executor's time, at the control plane's pace).
    const target =
      r.elapsed_ms !== null
        ? r.clock_at + Math.max(0, elapsed.ms - r.elapsed_ms)
        : r.started_clock + Math.max(0, at - r.started_wall - elapsed.ms / c.pace) + elapsed.ms;
    to = Math.max(from, target);
  }
  to = Math.round(to);
  if (reads && r) {
    r.elapsed_ms = Math.max(r.elapsed_ms ?? 0, elapsed.ms);
    r.clock_at = to;
  }
  c.clock_at = to;
  return to;
}

/** A node stage attempt starts: readings of the executor's clock are taken from here. */
export function startAttempt(c: RunClock, stage: string, attempt: number, wall: number): void {
  c.reading = { stage, attempt, started_wall: wall, started_clock: c.clock_at ?? wall, elapsed_ms: null, clock_at: c.clock_at ?? wall };
}
