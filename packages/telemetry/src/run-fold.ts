import type { InterruptionCause, TimeLabel } from './causes.js';
import { advanceClock, startAttempt, startingClock, type RunClock } from './run-clock.js';
import { appendSegment, overlaySegment, type Segment } from './segments.js';

/**
 * One ledger event as the telemetry folds read it: its type, its payload and the time the ledger recorded it
 * (epoch milliseconds). Payload fields are read defensively: a missing or malformed field is its default.
 */
export interface TelemetryEvent {
  type: string;
  data: Record<string, unknown>;
  at: number;
}

/** Where the run is, as far as time accounting goes. */
type Mode = 'program_startup' | 'data_prep' | 'train_startup' | 'training' | 'recovering' | 'awaiting_operator' | 'other' | 'ended';

export interface Interruption {
  cause: InterruptionCause;
  at: number;
  /** The event time − the last heartbeat (lost node) or last progress (hang); null when the agent reported it. */
  detection_ms: number | null;
  /** The next `RunResumed` − the interruption; null until the run resumes. */
  resume_ms: number | null;
}

export interface CheckpointTransfer {
  kind: 'save' | 'restore';
  at: number;
  bytes: number;
  ms: number;
}

/** The telemetry of one run so far; plain JSON, so a projection can store it and carry on from it. */
export interface RunTelemetry {
  run_id: string;
  booking_id: string | null;
  started_at: number | null;
  ended_at: number | null;
  last_at: number | null;
  mode: Mode;
  stage: string | null;
  /**
   * The highest step reported so far, and the highest reported before the last interruption or restart, of the
   * training stage `steps_stage` (each stage counts its steps from 1 again).
   */
  max_step: number;
  recompute_until: number;
  steps_stage?: string | null;
  /**
   * The clock the segments are on: wall time, or for a time-scaled run its modelled time (run-clock.ts). The
   * span's start is the same on both; `started_at`, `ended_at`, `last_at` and every `at` stay wall times.
   */
  clock: RunClock;
  segments: Segment[];
  interruptions: Interruption[];
  checkpoints: CheckpointTransfer[];
  /**
   * Set once a projection keeps only what later events can change (run-batch.ts): the start of the first kept
   * segment; earlier segments, final interruptions and checkpoint transfers are in the projection's rows.
   */
  kept_from?: number | null;
}

export const TELEMETRY_EVENT_TYPES = [
  'RunReserved',
  'StageStarted',
  'StageCompleted',
  'StageFailed',
  'ProgressRecorded',
  'CheckpointSaved',
  'CheckpointRestored',
  'TaskFailed',
  'TaskHung',
  'NodeLost',
  'RunResumed',
  'RestartProposed',
  'RestartApproved',
  'RunSucceeded',
  'RunFailed',
  'RunCancelled',
] as const;

export function emptyRunTelemetry(runId: string): RunTelemetry {
  return {
    run_id: runId,
    booking_id: null,
    started_at: null,
    ended_at: null,
    last_at: null,
    mode: 'program_startup',
    stage: null,
    max_step: -1,
    recompute_until: -1,
    steps_stage: null,
    clock: startingClock(),
    segments: [],
    interruptions: [],
    checkpoints: [],
  };
}

/** Stages whose progress is training: the curriculum and post-training stages (not data prep, planning or eval). */
function isTrainingStage(stage: unknown): boolean {
  return typeof stage === 'string' && stage !== 'data_prep' && stage !== 'planning' && !stage.startsWith('eval_');
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function instant(v: unknown): number | null {
  if (typeof v !== 'string') return null;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : null;
}

function interruptionOf(e: TelemetryEvent): { cause: InterruptionCause; detectedFrom: number | null } | null {
  if (e.type === 'NodeLost') return { cause: 'node_lost', detectedFrom: instant(e.data.last_heartbeat_at) };
  if (e.type === 'TaskHung') return { cause: 'hang', detectedFrom: instant(e.data.last_progress_at) };
  if (e.type === 'TaskFailed' && (e.data.failure === 'crash' || e.data.failure === 'gpu_fault')) return { cause: e.data.failure, detectedFrom: null };
  return null;
}

/** What the time since the previous event was spent on, now that this event tells us. */
function closingLabel(s: RunTelemetry, e: TelemetryEvent): TimeLabel {
  switch (s.mode) {
    case 'training': {
      if (e.type === 'ProgressRecorded') {
        const step = num(e.data.step) ?? s.max_step;
        // A later stage's steps start from 1 again: they are measured against nothing of the stage before.
        const laterStage = s.steps_stage != null && isTrainingStage(e.data.stage) && e.data.stage !== s.steps_stage;
        const floor = laterStage ? -1 : s.recompute_until;
        return step > floor ? 'productive' : 'wasted_progress';
      }
      // Work since the last report is lost with the attempt: it will be recomputed after the restore.
      if (interruptionOf(e) || e.type === 'TaskFailed' || e.type === 'StageFailed') return 'wasted_progress';
      return s.max_step > s.recompute_until ? 'productive' : 'wasted_progress';
    }
    case 'train_startup':
      return 'program_startup';
    case 'recovering':
      return 'infrastructure_recovery';
    case 'ended':
      return 'other';
    default:
      return s.mode;
  }
}

/**
 * Folds one event into a run's telemetry. Pure: the state passed in is not changed. Events must come in ledger
 * order; events before `RunReserved` or after the run ended are ignored (cleanup is not the run's time).
 */
export function foldRunTelemetry(prev: RunTelemetry, e: TelemetryEvent): RunTelemetry {
  const s: RunTelemetry = structuredClone(prev);
  applyRunEvent(s, e);
  return s;
}

/** As foldRunTelemetry, changing `s` in place: for a projection folding thousands of events into its own copy. */
export function applyRunEvent(s: RunTelemetry, e: TelemetryEvent): void {
  // A judgement on an incident's latencies, not time the run spent: it closes no segment and changes no mode.
  if (e.type === 'SloBreached') return;
  if (e.type === 'RunReserved') {
    if (s.started_at !== null) return;
    s.started_at = e.at;
    s.last_at = e.at;
    s.clock = startingClock(e.at);
    s.booking_id = typeof e.data.booking_id === 'string' ? e.data.booking_id : null;
    return;
  }
  if (s.started_at === null || s.ended_at !== null || s.last_at === null) return;
  // A state folded before the run's clock was kept reads as a wall clock at its latest event.
  s.clock ??= startingClock(s.last_at);
  const at = Math.max(e.at, s.last_at);
  const from = s.clock.clock_at ?? s.last_at;
  const to = advanceClock(s.clock, s.last_at, at, s.mode === 'training', e);
  appendSegment(s.segments, from, to, closingLabel(s, e));
  s.last_at = at;

  const interruption = interruptionOf(e);
  if (interruption) {
    // A lost node, then its task's failure, is one incident: counted once, at its first event.
    if (s.mode !== 'recovering') {
      // The detection gap is the control plane's wall time: it reaches back that far on the run's clock.
      const gap = interruption.detectedFrom !== null ? at - Math.max(interruption.detectedFrom, s.started_at) : 0;
      if (gap > 0) overlaySegment(s.segments, Math.max(s.started_at, to - gap), to, 'infrastructure_recovery');
      s.interruptions.push({ cause: interruption.cause, at, detection_ms: interruption.detectedFrom !== null ? Math.max(0, e.at - interruption.detectedFrom) : null, resume_ms: null });
      s.recompute_until = Math.max(s.recompute_until, s.max_step);
      s.mode = 'recovering';
    }
    return;
  }

  switch (e.type) {
    case 'StageStarted':
      s.stage = typeof e.data.stage === 'string' ? e.data.stage : null;
      if (s.stage !== null) startAttempt(s.clock, s.stage, typeof e.data.attempt === 'number' && Number.isInteger(e.data.attempt) ? e.data.attempt : 1, at);
      s.mode = s.stage === 'data_prep' ? 'data_prep' : s.stage === 'planning' ? 'program_startup' : isTrainingStage(s.stage) ? 'train_startup' : 'other';
      break;
    case 'ProgressRecorded': {
      const step = num(e.data.step);
      const stage = e.data.stage ?? s.stage;
      if (isTrainingStage(stage) && (s.mode === 'train_startup' || s.mode === 'training')) {
        s.mode = 'training';
        if (typeof stage === 'string' && stage !== s.steps_stage) {
          if (s.steps_stage != null) {
            s.max_step = -1;
            s.recompute_until = -1;
          }
          s.steps_stage = stage;
        }
        if (step !== null) s.max_step = Math.max(s.max_step, step);
      }
      break;
    }
    case 'CheckpointSaved':
    case 'CheckpointRestored': {
      const kind = e.type === 'CheckpointSaved' ? 'save' : 'restore';
      const seconds = num(kind === 'save' ? e.data.save_seconds : e.data.restore_seconds);
      const bytes = num(e.data.bytes);
      if (seconds === null || seconds < 0) break;
      const ms = Math.round(seconds * 1000);
      if (bytes !== null && bytes >= 0) s.checkpoints.push({ kind, at, bytes, ms });
      // An asynchronous save does not hold training up; a synchronous one and every restore do.
      // Save and restore times are the executor's, so they reach back on the run's clock.
      if (kind === 'restore' || e.data.async !== true) overlaySegment(s.segments, Math.max(s.started_at, to - ms), to, kind === 'save' ? 'checkpoint_save_stall' : 'checkpoint_restore');
      break;
    }
    case 'RunResumed': {
      const pending = s.interruptions.findLast((i) => i.resume_ms === null);
      if (pending && s.mode === 'recovering') pending.resume_ms = at - pending.at;
      s.mode = 'train_startup';
      break;
    }
    case 'RestartProposed':
      s.recompute_until = Math.max(s.recompute_until, s.max_step);
      s.mode = 'awaiting_operator';
      break;
    case 'RestartApproved':
      s.mode = 'program_startup';
      break;
    case 'StageCompleted':
      s.mode = 'other';
      break;
    case 'StageFailed':
      if (s.mode !== 'recovering') s.mode = 'other';
      break;
    case 'RunSucceeded':
    case 'RunFailed':
    case 'RunCancelled':
      s.ended_at = at;
      s.clock.reading = null;
      s.mode = 'ended';
      break;
    default:
      break;
  }
}

/** Folds a run's events from nothing. */
export function runTelemetryOf(runId: string, events: readonly TelemetryEvent[]): RunTelemetry {
  const s = emptyRunTelemetry(runId);
  for (const e of events) applyRunEvent(s, e);
  return s;
}
