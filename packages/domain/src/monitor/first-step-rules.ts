/**
 * The start-up allowance (docs/pipeline.md, "Start-up allowance"): how long a task that trains may go from its
 * assignment to its first step before the monitor calls it hung. A hang is otherwise judged on a step that stopped
 * moving; a task that never reaches a step (a trainer stuck loading data, a restore that never finishes, a trainer
 * waiting for batches nobody sends) would be left alone for ever without this. Pure.
 */

/** What the monitor knows of a task that has reported no step in its attempt yet. */
export interface StartupFacts {
  /** When the task was assigned (its attempt's StageStarted): the allowance counts from here. */
  assigned_at: Date;
  /** Bytes it reads back before its first step: the checkpoint it resumes from or starts from; 0 when none. */
  restore_bytes: number;
  /** Nodes of the job, which read the checkpoint side by side. */
  world_size: number;
}

export interface StartupSettings {
  /** The operator's bound on the allowance (`ITO_FIRST_STEP_MAX_S`), whatever the plan expects. */
  first_step_max_s: number;
}

/**
 * Seconds the plan expects from a launched process to a running step, before any restore: imports, the process
 * group's rendezvous, the data loader's first batches, the kernels' warm-up. A model, like the planner's figures.
 */
export const EXPECTED_LAUNCH_S = 60;
/** Storage read bandwidth per node for a restore (bytes/s): the planner's storage write bandwidth, 2 GB/s. */
export const RESTORE_BYTES_PER_S_PER_NODE = 2e9;

/** The start-up the plan expects: the launch, the restore of the weights it starts from, and its first step. */
export function expectedStartupSeconds(facts: Pick<StartupFacts, 'restore_bytes' | 'world_size'>, plannedStepS: number | null): number {
  const restore = Math.max(0, facts.restore_bytes) / (Math.max(1, facts.world_size) * RESTORE_BYTES_PER_S_PER_NODE);
  const step = typeof plannedStepS === 'number' && Number.isFinite(plannedStepS) && plannedStepS > 0 ? plannedStepS : 0;
  return EXPECTED_LAUNCH_S + restore + step;
}

/**
 * The allowance: k (the hang factor) × the expected start-up, at most the operator's bound, and never under the
 * misses a silent node gets (a step is seen only at the next heartbeat). Whole seconds, rounded up.
 */
export function firstStepAllowance(
  facts: Pick<StartupFacts, 'restore_bytes' | 'world_size'>,
  plannedStepS: number | null,
  settings: StartupSettings & { interval_s: number; misses: number; hang_factor: number },
): number {
  const planned = settings.hang_factor * expectedStartupSeconds(facts, plannedStepS);
  return Math.ceil(Math.max(settings.interval_s * settings.misses, Math.min(settings.first_step_max_s, planned)));
}
