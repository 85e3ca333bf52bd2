import type { CurriculumStage } from '@ito/contracts';

/**
 * The events of a run stream (`run-<id>`), past tense. Payloads carry ids and facts, never secrets; the
 * manifest travels by digest (its bytes live in the runs projection, bound to that digest).
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
  StageStarted: { run_id: string; stage: string };
  StageCompleted: { run_id: string; stage: string };
  CheckpointSaved: { run_id: string; checkpoint_id: string; step: number; uri: string; bytes: number; save_seconds: number };
  EvalGatePassed: { run_id: string; stage: CurriculumStage; metrics: Record<string, number> };
  EvalGateFailed: { run_id: string; stage: CurriculumStage; metrics: Record<string, number>; failed: string[] };
  NodeLost: { run_id: string; node_id: string; last_heartbeat_at: string };
  RunResumed: { run_id: string; from_checkpoint_id: string | null };
  LossSpikeDetected: { run_id: string; step: number; loss: number };
  RestartProposed: { run_id: string; from_checkpoint_id: string | null; reason: string };
  RestartApproved: { run_id: string; confirmation_ref: string };
  CancelRequested: { run_id: string; confirmation_ref: string };
  RunCancelled: { run_id: string; reason: string };
  CleanupStarted: { run_id: string; confirmation_ref: string; to_remove: string[]; release_booking: boolean };
  CleanupCompleted: { run_id: string; removed: string[]; booking_released: boolean };
  RunSucceeded: { run_id: string };
  RunFailed: { run_id: string; reason: string };
  BudgetExhausted: { run_id: string; spent_usd: number; ceiling_usd: number };
  ProgressRecorded: { run_id: string; stage: string; step: number; tokens: number; loss?: number; message?: string };
}

export type RunEventType = keyof RunEventMap;
export type RunEvent = { [K in RunEventType]: { type: K; data: RunEventMap[K] } }[RunEventType];

export const RUN_EVENT_TYPES = [
  'RunReserved',
  'RunConfirmed',
  'StageStarted',
  'StageCompleted',
  'CheckpointSaved',
  'EvalGatePassed',
  'EvalGateFailed',
  'NodeLost',
  'RunResumed',
  'LossSpikeDetected',
  'RestartProposed',
  'RestartApproved',
  'CancelRequested',
  'RunCancelled',
  'CleanupStarted',
  'CleanupCompleted',
  'RunSucceeded',
  'RunFailed',
  'BudgetExhausted',
  'ProgressRecorded',
] as const satisfies readonly RunEventType[];

export function runStreamId(runId: string): string {
  return `run-${runId}`;
}
