import { FAILURE_KINDS, type Directive, type GatedStage, type FailureKind, type StageName, type TaskRole, type TaskSpec } from '@ito/contracts';
import type { Pipeline } from '../pipeline/pipeline.js';
import type { DataPreparedEvent, LadderDecisionEvent } from './data-events.js';

/** A checkpoint as a stage's spec names it: enough to restore from. */
export interface CheckpointRef {
  checkpoint_id: string;
  uri: string;
  step: number;
}

/** One node's share of a stage attempt. */
export interface TaskRef {
  task_id: string;
  node_id: string;
  rank: number;
  role: TaskRole;
}

/** Why a stage attempt failed: the agent's report, or the monitor's finding. */
export type StageFailure = FailureKind | 'node_lost' | 'hang';

/** One failure the run recovers from, as RunResumed and the SLO records carry it. */
/** What an incident can be: a failure an agent reported, a node gone silent, or a hang. */
export const INCIDENT_KINDS = [...FAILURE_KINDS, 'node_lost', 'hang'] as const;
/** The SLOs an incident is judged on, and the bounds a breach can break (docs/telemetry.md). */
export const SLO_NAMES = ['detection', 'resume'] as const;
export const SLO_BOUNDS = ['target', 'seed'] as const;

export interface IncidentFacts {
  kind: (typeof INCIDENT_KINDS)[number];
  node_id: string;
  task_id?: string;
  /** The last good evidence: the last heartbeat (lost), the last progress (hang), the report itself (crash). */
  evidence_at: string | null;
  detected_at: string;
}

/** The layout the planning stage chose on the booking's live topology; task specs are built from it. */
export interface LivePlan {
  precision: 'bf16' | 'fp8';
  parameters: number;
  family: string;
  nodes: number;
  gpus_per_node: number;
  /** One layout per sequence length the curriculum trains at. */
  layouts: Array<{ sequence_length: number; tp: number; pp: number; dp: number; cp: number; micro_batch: number; global_batch_sequences: number; tokens_per_s: number }>;
  checkpoint_bytes: number;
  estimated_cost_usd: number;
  /** Nodes RLVR gives to rollout (the rest train); absent or 0: trainer and rollout share every node. */
  rlvr_rollout_nodes?: number;
}

/**
 * The events of a run stream (`run-<id>`), past tense. Payloads carry ids and facts, never secrets; the
 * manifest travels by digest (its bytes are stored once, bound to that digest). Fields marked optional were
 * added after the first events of their type were written: folds treat a missing one as its default.
 */
export interface RunEventMap {
  RunReserved: {
    run_id: string;
    tenant_id: string;
    booking_id: string;
    manifest_digest: string;
    idempotency_key: string;
    confirmation_ref: string;
    estimated_cost_usd: number;
    incremental_cost_usd: number;
    plan: Record<string, unknown>;
  };
  RunConfirmed: { run_id: string; confirmation_ref: string };
  /** The stages this run will go through, with everything the orchestrator needs to drive them. */
  PipelinePlanned: { run_id: string; pipeline: Pipeline };
  StageStarted: {
    run_id: string;
    stage: string;
    attempt?: number;
    /** Node stages: one task per node, and the spec every task shares (rank and role come from its TaskRef). */
    tasks?: TaskRef[];
    spec?: Omit<TaskSpec, 'rank' | 'role'>;
    /** When the attempt's tasks were assigned, on the control plane's clock: where its charged node time starts. */
    started_at?: string;
  };
  /** Data prep: one per data ref, what was checked and how. */
  DataRefChecked: { run_id: string; index: number; ref: string; verified: boolean; method: string; sha256?: string; bytes?: number; note?: string };
  /** Data prep: one per `file://` data ref, what dedup and decontamination found and did. */
  DataPrepared: DataPreparedEvent;
  /** The 150M-ladder decision for custom data, from its two proxy tasks. */
  LadderDecision: LadderDecisionEvent;
  /** Planning: the layout re-planned on the booking's live topology. */
  PlanComputed: { run_id: string; plan: LivePlan };
  StageCompleted: { run_id: string; stage: string; attempt?: number; metrics?: Record<string, number> };
  /** A stage attempt that could not finish (a task failed); the orchestrator retries it or fails the run. */
  StageFailed: { run_id: string; stage: string; attempt: number; reason: string; task_id?: string; failure?: StageFailure; node_id?: string };
  ProgressRecorded: {
    run_id: string;
    stage: string;
    step: number;
    tokens: number;
    loss?: number;
    message?: string;
    attempt?: number;
    task_id?: string;
    seq?: number;
    throughput_tokens_per_s?: number;
    /** The trainer's own clock: a claim, compared with the control plane's (`received_at`). */
    elapsed_s?: number;
    /** When the API received the report, on its own clock. */
    received_at?: string;
  };
  CheckpointSaved: {
    run_id: string;
    checkpoint_id: string;
    step: number;
    uri: string;
    bytes: number;
    save_seconds: number;
    stage?: string;
    attempt?: number;
    task_id?: string;
    seq?: number;
    async?: boolean;
    final?: boolean;
    simulated?: boolean;
  };
  /** A checkpoint file removed from storage (keep_last, or cleanup). Recorded after the removal. */
  /**
   * `existed`: a file was really removed. `refused`: why nothing was removed although something may be there
   * (its path passes through a symlink or is not an object): the file driver never deletes outside the prefix.
   */
  CheckpointDeleted: { run_id: string; checkpoint_id: string; uri: string; reason: 'keep_last' | 'cleanup'; existed: boolean; refused?: string };
  TaskCompleted: { run_id: string; task_id: string; stage: string; attempt: number; node_id: string; seq: number; step?: number; elapsed_s: number; metrics?: Record<string, number>; received_at?: string };
  /** The agent's own report of a crash, a GPU fault or an error; `detected_at` is when the API received it. */
  TaskFailed: {
    run_id: string;
    task_id: string;
    stage: string;
    attempt: number;
    node_id: string;
    seq: number;
    failure: FailureKind;
    reason: string;
    step?: number;
    elapsed_s?: number;
    detected_at?: string;
  };
  /** The agent confirms it stopped a task the control plane withdrew or asked to stop. */
  TaskStopped: { run_id: string; task_id: string; stage: string; attempt: number; node_id: string; seq?: number; reason: string; step?: number; elapsed_s?: number; received_at?: string };
  /** Tasks taken back from their nodes: their later reports are refused (fenced by attempt). */
  TasksWithdrawn: { run_id: string; stage: string; attempt: number; task_ids: string[]; reason: string };
  EvalGatePassed: { run_id: string; stage: GatedStage; metrics: Record<string, number>; failed?: string[] };
  EvalGateFailed: { run_id: string; stage: GatedStage; metrics: Record<string, number>; failed: string[] };
  /**
   * The monitor found a node running a task silent for `misses` heartbeat intervals. `last_heartbeat_at` is the
   * evidence (null when it never beat after registering); `detected_at` the monitor's (database) clock.
   */
  NodeLost: {
    run_id: string;
    node_id: string;
    last_heartbeat_at: string | null;
    detected_at?: string;
    misses?: number;
    interval_s?: number;
    task_id?: string;
    stage?: string;
    attempt?: number;
    silent_s?: number;
  };
  /** The node still beats, but its task's step has not moved for k × the step time expected of it. */
  TaskHung: {
    run_id: string;
    node_id: string;
    task_id: string;
    stage: string;
    attempt: number;
    last_progress_at: string;
    last_heartbeat_at: string;
    expected_step_s: number;
    k: number;
    step?: number;
    detected_at?: string;
    stuck_s?: number;
    /**
     * A task that never reached its first step: the start-up allowance it overran, and the evidence in words
     * (`no first step within N s`); `last_progress_at` is then the task's assignment.
     */
    first_step_allowance_s?: number;
    evidence?: string;
  };
  /** A node this run declared lost beats again: it may serve as a spare; its old attempt stays fenced off. */
  NodeRecovered: { run_id?: string; node_id: string; last_heartbeat_at: string; lost_at?: string };
  RunResumed: {
    run_id: string;
    from_checkpoint_id: string | null;
    stage?: string;
    attempt?: number;
    from_step?: number;
    recompute_steps?: number;
    /** The nodes the new attempt runs on, the spares among them, and the failed nodes left out. */
    nodes?: string[];
    spare_nodes?: string[];
    replaced_nodes?: string[];
    /** Set when the attempt runs on fewer nodes than the one before: the re-planned node count. */
    replanned_nodes?: number;
    /** The incident resumed from: what failed, when its evidence was last good, when it was detected. */
    incident?: IncidentFacts;
    detection_latency_s?: number;
    resume_latency_s?: number;
  };
  /** An agent restored a checkpoint at the start of a resumed attempt, and how long the restore took. */
  CheckpointRestored: { run_id: string; checkpoint_id: string; step: number; bytes: number; restore_seconds: number; stage: string; attempt: number; task_id?: string; seq?: number };
  /**
   * An incident missed an SLO: its detection latency (when the failure was detected) or its resume latency (when
   * the run resumed), against the operator's target or the seed's hard bound. Appended in the same transaction as
   * the event that revealed it, once per incident and SLO.
   */
  SloBreached: {
    run_id: string;
    incident_kind: IncidentFacts['kind'];
    node_id: string;
    /** The incident's detection time: with node_id, it names the incident the breach belongs to. */
    detected_at: string;
    slo: (typeof SLO_NAMES)[number];
    measured_s: number;
    target_s: number;
    bound: (typeof SLO_BOUNDS)[number];
  };
  LossSpikeDetected: { run_id: string; step: number; loss: number; stage?: string; attempt?: number; moving_average?: number; factor?: number; consecutive?: number };
  RestartProposed: {
    run_id: string;
    from_checkpoint_id: string | null;
    reason: string;
    stage?: string;
    from_step?: number;
    skip_steps?: { from: number; to: number } | null;
  };
  RestartApproved: { run_id: string; confirmation_ref: string };
  /** The control plane asked the run's tasks to stop (with a final checkpoint): the budget ran out. */
  StopRequested: { run_id: string; reason: 'budget_exhausted'; spent_usd: number; ceiling_usd: number };
  CancelRequested: { run_id: string; confirmation_ref: string };
  RunCancelled: { run_id: string; reason: string };
  CleanupStarted: { run_id: string; confirmation_ref: string; to_remove: string[]; release_booking: boolean };
  /** `refused`: checkpoint URIs not removed (their path passes through a symlink or is not an object). `storage`: everything removed under the run's prefix (checkpoints, prepared data, reports), where a driver could reach it. */
  CleanupCompleted: {
    run_id: string;
    removed: string[];
    booking_released: boolean;
    missing?: string[];
    refused?: string[];
    storage?: { prefix: string; objects: number; bytes: number };
  };
  RunSucceeded: { run_id: string };
  RunFailed: { run_id: string; reason: string; code?: string };
  BudgetExhausted: { run_id: string; spent_usd: number; ceiling_usd: number; final_checkpoint_id?: string | null };
}

export type RunEventType = keyof RunEventMap;
export type RunEvent = { [K in RunEventType]: { type: K; data: RunEventMap[K] } }[RunEventType];

export const RUN_EVENT_TYPES = [
  'RunReserved',
  'RunConfirmed',
  'PipelinePlanned',
  'StageStarted',
  'DataRefChecked',
  'DataPrepared',
  'LadderDecision',
  'PlanComputed',
  'StageCompleted',
  'StageFailed',
  'ProgressRecorded',
  'CheckpointSaved',
  'CheckpointDeleted',
  'TaskCompleted',
  'TaskFailed',
  'TaskStopped',
  'TasksWithdrawn',
  'EvalGatePassed',
  'EvalGateFailed',
  'NodeLost',
  'TaskHung',
  'NodeRecovered',
  'RunResumed',
  'CheckpointRestored',
  'SloBreached',
  'LossSpikeDetected',
  'RestartProposed',
  'RestartApproved',
  'StopRequested',
  'CancelRequested',
  'RunCancelled',
  'CleanupStarted',
  'CleanupCompleted',
  'RunSucceeded',
  'RunFailed',
  'BudgetExhausted',
] as const satisfies readonly RunEventType[];

export function runStreamId(runId: string): string {
  return `run-${runId}`;
}

/** What a report's answer tells the agent to do next. */
export type { Directive, StageName };
