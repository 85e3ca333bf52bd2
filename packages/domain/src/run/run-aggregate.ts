import type { RunState, TaskStatus } from '@ito/contracts';
import type { LossTracker } from '../pipeline/loss-spike.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import type { CheckpointRef, IncidentFacts, LivePlan, TaskRef } from './run-events.js';

// The run aggregate's shape, apart from its fold, so the rules that read a run (its cost, whether it is over) need
// not import the fold that uses them.

/** `restored`: the task reported restoring its attempt's checkpoint (recorded once per task). */
export type TaskState = TaskRef & { status: TaskStatus | 'stopped'; last_seq: number; restored?: boolean };

/** One attempt at one stage: its tasks, and how far its leader (rank 0) got on the executor's clock. */
export interface StageAttempt {
  stage: string;
  attempt: number;
  /**
   * running: its tasks work; completed; failed: a task failed, a retry decides; withdrawn: the control plane
   * took its tasks back (loss spike, cancel, budget).
   */
  status: 'running' | 'completed' | 'failed' | 'withdrawn';
  tasks: TaskState[];
  leader_elapsed_s: number;
  resume_from: CheckpointRef | null;
  /** Why a failed attempt failed (its StageFailed's reason): the run's reason when no attempt is left. */
  failure_reason?: string;
  /** The steps the stage's plan gives it (the task spec's `total_steps`); null when the attempt has no spec. */
  total_steps?: number | null;
  /** The step of the leader's last recorded progress in this attempt; null before the first. */
  last_step?: number | null;
  /** When the attempt's tasks were assigned and when its last report arrived, on the control plane's clock (ms). */
  started_at_ms?: number | null;
  last_report_ms?: number | null;
}

export interface RunCheckpoint {
  checkpoint_id: string;
  step: number;
  uri: string;
  bytes: number;
  save_seconds?: number;
  stage?: string;
  attempt?: number;
  final?: boolean;
  simulated?: boolean;
}

/** The run aggregate's state, folded from its stream. `status` is the public state enum. */
export interface RunAggregate {
  status: RunState | 'none';
  runId: string | null;
  bookingId: string | null;
  manifestDigest: string | null;
  idempotencyKey: string | null;
  stage: string | null;
  /** Checkpoints still in storage (a deletion removes its entry). */
  checkpoints: RunCheckpoint[];
  /** The latest progress the leader reported, for status displays. */
  progress: { stage: string; step: number; tokens: number; loss: number | null } | null;
  /** The state to return to once a recovery or operator wait ends. */
  resumeTo: RunState | null;
  terminal: RunState | null;
  version: number;
  pipeline: Pipeline | null;
  plan: LivePlan | null;
  current: StageAttempt | null;
  /** Attempts made per stage. */
  attempts: Record<string, number>;
  completedStages: string[];
  /** Cost of node time so far: finished attempts plus the running one, at the booking's rate. */
  spentUsd: number;
  accruedUsd: number;
  loss: LossTracker;
  stopRequested: { reason: 'budget_exhausted'; spent_usd: number; ceiling_usd: number } | null;
  /** A proposed (and, once approved, pending) restart after a loss spike. */
  restart: { from: CheckpointRef | null; skip_steps: { from: number; to: number } | null; stage: string; approved: boolean } | null;
  cleanup: { to_remove: string[]; done: boolean; release_booking: boolean } | null;
  failure: { reason: string; code?: string } | null;
  /** Proxy eval losses of the ladder stages that completed, by stage. */
  ladderLosses: Record<string, number>;
  /** Nodes this run must not be given again: declared lost (until they recover), or with a GPU fault. */
  excludedNodes: string[];
  /**
   * Nodes a task of this run hung on: still heard from, so possibly sound (a hang is often the trainer's or a
   * peer's), but chosen for this run only after every other free live node, so a spare takes their place first.
   */
  suspectNodes: string[];
  /** The failure the run is recovering from, until the attempt that resumes from it starts. */
  incident: IncidentFacts | null;
}
