import type { RunAggregate, StageAttempt } from './run-aggregate.js';

/**
 * Seconds an attempt is charged for: the control plane's own clock, from the assignment of its tasks to its last
 * report, is the floor. The trainer's `elapsed_s` is a claim compared with it: a trainer that under-reports cannot
 * spend past the ceiling, and a claim above the wall clock (a time-scaled simulation's) is charged as claimed.
 */
export function chargedSeconds(attempt: StageAttempt): number {
  const start = attempt.started_at_ms ?? null;
  const last = attempt.last_report_ms ?? null;
  const measured = start !== null && last !== null ? Math.max(0, (last - start) / 1000) : 0;
  return Math.max(measured, attempt.leader_elapsed_s);
}

/** What an attempt costs: its charged seconds on every node it holds, at the booking's rate. */
export function attemptCost(state: RunAggregate, attempt: StageAttempt | null | undefined): number {
  if (!attempt || !state.pipeline) return 0;
  const { rate_usd_per_gpu_hour, gpus_per_node } = state.pipeline.cost;
  return (chargedSeconds(attempt) * attempt.tasks.length * gpus_per_node * rate_usd_per_gpu_hour) / 3600;
}
