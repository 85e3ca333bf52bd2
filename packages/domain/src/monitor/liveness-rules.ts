import { firstStepAllowance, type StartupFacts } from './first-step-rules.js';

/** How the monitor judges liveness: the heartbeat interval, the misses before a node is lost, and k for hangs. */
export interface LivenessSettings {
  interval_s: number;
  misses: number;
  /** A task is hung after k × its expected step time without progress. */
  hang_factor: number;
  /** The operator's bound on a task's start-up allowance, in seconds (`ITO_FIRST_STEP_MAX_S`). */
  first_step_max_s: number;
}

/** What the monitor knows of one node that runs a task of a run's current attempt. */
export interface NodeObservation {
  node_id: string;
  /** Its newest heartbeat (or its registration, before the first beat); null if it never spoke. */
  last_heartbeat_at: Date | null;
  /** How far the task got, from the heartbeats, when they name this task's attempt; null otherwise. */
  progress: { step: number; progress_at: Date; step_s: number | null } | null;
  /**
   * Seconds per step measured on this stage of the run by the monitor so far: by another node of the attempt, or by
   * an earlier attempt (a resumed one runs the same layout on the same kind of nodes). Used before the node's own is
   * measured: it is the real pace, where the plan's is a model (and knows nothing of a simulated clock).
   */
  stage_step_s?: number | null;
  /** The step time the plan expects (seconds on the wall clock); used when nothing was measured. */
  planned_step_s: number | null;
  /**
   * Set for a task that trains and has reached no step in its attempt yet (no heartbeat of this attempt named a
   * step, no progress report came): it is judged on its start-up allowance. Absent for a task without steps (an
   * evaluation, a rollout) or one past its first step.
   */
  startup?: StartupFacts | null;
}

/**
 * `grace_from`: since when the monitor's view can be trusted. It is the monitor's own start (or takeover), or
 * the first sweep after a gap in its sweeps (the database or the monitor itself was unreachable): heartbeats
 * sent in the gap were never recorded, so silence before then is no evidence. A node is lost only after the
 * misses counted from then (an agent whose beats failed during the outage retries on its own cycle, and the API
 * may come up after the monitor), and nobody is judged hung in the first interval.
 */
export interface SweepClock {
  now: Date;
  grace_from: Date;
}

export type LivenessVerdict =
  | { kind: 'alive' }
  | { kind: 'lost'; silent_s: number }
  | {
      kind: 'hung';
      stuck_s: number;
      expected_step_s: number;
      last_progress_at: Date;
      /** A task that never reached its first step: the allowance it overran (then `last_progress_at` is its assignment). */
      first_step_allowance_s?: number;
    };

const seconds = (ms: number) => ms / 1000;

/**
 * Lost: silent for more than `misses` intervals, counting only silence since `grace_from`. Hung: heard from, and its heartbeats say the task's step has not
 * moved for k × its expected step time (`expectedStepSeconds`), and never less than `misses`
 * intervals (progress travels with the heartbeats); or, before its first step, its start-up allowance passed
 * (`firstStepAllowance`). Neither before one interval after `grace_from`. Pure.
 */
export function judgeNode(obs: NodeObservation, settings: LivenessSettings, clock: SweepClock): LivenessVerdict {
  const now = clock.now.getTime();
  const trusted = seconds(now - clock.grace_from.getTime());
  if (trusted < settings.interval_s) return { kind: 'alive' };
  const lostAfter = settings.interval_s * settings.misses;
  const silent = obs.last_heartbeat_at ? seconds(now - obs.last_heartbeat_at.getTime()) : Number.POSITIVE_INFINITY;
  const observedSilence = Math.min(silent, trusted);
  if (observedSilence > lostAfter) return { kind: 'lost', silent_s: Number.isFinite(silent) ? silent : lostAfter };
  const p = obs.progress;
  if (!p && obs.startup) return judgeStartup(obs, obs.startup, settings);
  const expected = expectedStepSeconds(obs);
  if (!p || expected === null) return { kind: 'alive' };
  // Stuck by the node's own word: its newest heartbeat still names the step it had at `progress_at`. Measured to
  // that heartbeat, not to now, so a late heartbeat (a busy network or host) is silence, judged by the misses,
  // never a hang.
  const stuck = seconds(obs.last_heartbeat_at!.getTime() - p.progress_at.getTime());
  // Progress is sampled at heartbeats, and a checkpoint save or a restore pauses the step: never less than the
  // misses a silent node gets, so fast steps never turn a sampling gap into a hang.
  const hungAfter = Math.max(settings.hang_factor * expected, settings.interval_s * settings.misses);
  return stuck > hungAfter ? { kind: 'hung', stuck_s: stuck, expected_step_s: expected, last_progress_at: p.progress_at } : { kind: 'alive' };
}

/**
 * A task before its first step: hung once its node's newest heartbeat, still naming no step of the attempt, came
 * more than the start-up allowance after the task was assigned. Measured to that heartbeat, not to now, as a hang is:
 * a late heartbeat is silence, judged by the misses.
 */
function judgeStartup(obs: NodeObservation, startup: StartupFacts, settings: LivenessSettings): LivenessVerdict {
  // Never heard from: nothing says it is stuck rather than silent; the misses judge it.
  if (!obs.last_heartbeat_at) return { kind: 'alive' };
  const allowance = firstStepAllowance(startup, obs.planned_step_s, settings);
  const waited = seconds(obs.last_heartbeat_at.getTime() - startup.assigned_at.getTime());
  if (waited <= allowance) return { kind: 'alive' };
  return { kind: 'hung', stuck_s: waited, expected_step_s: expectedStepSeconds(obs) ?? 0, last_progress_at: startup.assigned_at, first_step_allowance_s: allowance };
}

/**
 * The step time a hang is judged against: the node's own measured one, else the stage's measured one (another node,
 * an earlier attempt), else the plan's; null when none is a positive number. Pure.
 */
export function expectedStepSeconds(obs: Pick<NodeObservation, 'progress' | 'stage_step_s' | 'planned_step_s'>): number | null {
  for (const s of [obs.progress?.step_s, obs.stage_step_s, obs.planned_step_s]) if (typeof s === 'number' && s > 0 && Number.isFinite(s)) return s;
  return null;
}

/**
 * The monitor's trust point after this sweep: unchanged while sweeps follow each other closely, reset to now
 * when the previous successful sweep is more than one interval old (a pause) or there was none (a start).
 */
export function nextGraceFrom(previous: { last_sweep_at: Date | null; grace_from: Date | null }, now: Date, settings: LivenessSettings): Date {
  if (!previous.last_sweep_at || !previous.grace_from) return now;
  return seconds(now.getTime() - previous.last_sweep_at.getTime()) > settings.interval_s ? now : previous.grace_from;
}
