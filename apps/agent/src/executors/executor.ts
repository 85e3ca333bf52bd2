import type { Assignment, ExecutorKind, FailureKind, PublishedPolicy, RolloutPollAnswer, RolloutSample } from '@ito/contracts';

/** What a running task tells the agent. The agent turns these into sequenced, fenced reports to the API. */
export interface TaskEvents {
  /** Training progress; the agent may coalesce these (the latest wins) between reports. */
  progress(p: { step: number; tokens: number; loss?: number; throughput_tokens_per_s?: number; elapsed_s: number; message?: string }): void;
  /**
   * The step this rank's trainer has reached, on every rank (only rank 0 reports progress): the agent's heartbeats
   * carry it, so the monitor sees a hang on any rank, not only on the one that reports. Never sent as a report.
   */
  step?(step: number): void;
  /** A checkpoint that is fully written and can be restored from. Never coalesced. */
  checkpoint(c: { step: number; uri: string; bytes: number; save_seconds: number; async: boolean; final?: boolean; simulated?: boolean; elapsed_s?: number }): void;
  /**
   * The checkpoint the attempt resumes from (the spec's `resume_from`) was restored, before the first step: the
   * bytes read and the seconds it took. Never coalesced; reported once.
   */
  restored(r: { step: number; bytes: number; restore_seconds: number }): void;
  /** A line for the agent's own log (never sent to the ledger). */
  log(message: string): void;
  /** RLVR tasks: the exchange with the other role, through the control plane (absent when the agent has none). */
  exchange?: RolloutExchange;
}

/** What an RLVR task says to its counterpart; each call is one fenced API call, resent until answered. */
export interface RolloutExchange {
  /** Rollout: posts a batch; answers the newest policy and whether the trainer is done. */
  postBatch(batch: { policy_version: number; samples: RolloutSample[]; dropped_groups?: number }): Promise<{ policy: PublishedPolicy; trainer_done: boolean }>;
  /** Trainer (rank 0): publishes its next policy version. */
  publishPolicy(policy: { version: number; uri: string }): Promise<void>;
  /** Trainer (rank 0): takes batches within the staleness bound of its version, waiting up to `wait_s`. */
  pollBatches(query: { policy_version: number; wait_s: number; max: number }): Promise<Pick<RolloutPollAnswer, 'batches' | 'rejected'>>;
}

export type TaskOutcome =
  | { kind: 'completed'; step: number; elapsed_s: number; metrics?: Record<string, number> }
  | { kind: 'failed'; failure: Exclude<FailureKind, 'stopped'>; reason: string; step: number; elapsed_s: number }
  | { kind: 'stopped'; reason: string; step: number; elapsed_s: number };

export interface TaskHandle {
  /** Settles once the task has ended, on its own or after stop(); never rejects. */
  readonly done: Promise<TaskOutcome>;
  /**
   * Asks the task to stop. With `checkpoint: true` it first saves a final checkpoint (reported with
   * `final: true`), then ends `stopped`. Calling it again, or after the end, does nothing.
   */
  stop(opts: { checkpoint: boolean; reason: string }): void;
}

/** Runs one assignment on this node. An executor may run several tasks at once; each has its own handle. */
export interface Executor {
  readonly kind: ExecutorKind;
  start(assignment: Assignment, events: TaskEvents): TaskHandle;
}
