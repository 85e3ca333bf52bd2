import type { BookingFacts, TelemetryEvent } from '../../src/index.js';

/**
 * A hand-built history whose figures are worked out by hand in telemetry.unit.test.ts (and docs/telemetry.md):
 * one run on a two-node booking with a lost node (detected 30 s after its last heartbeat, resumed 120 s later),
 * a synchronous and an asynchronous save, a restore, recomputed steps and an operator-approved restart.
 * Times are seconds after T0.
 */
export const T0 = Date.parse('2026-11-02T00:00:00.000Z');
export const RUN_ID = 'run_0000000000000000000000000000a001';
export const BOOKING_ID = 'bkg_0000000000000000000000000000b001';
export const IDLE_BOOKING_ID = 'bkg_0000000000000000000000000000b002';

export const at = (s: number): number => T0 + s * 1000;
const iso = (s: number): string => new Date(at(s)).toISOString();

export const BOOKINGS: BookingFacts[] = [
  { booking_id: BOOKING_ID, region: 'us-east-1', fabric: 'infiniband', gpu: 'h100', nodes: 2, gpus_per_node: 8, rate_usd_per_gpu_hour: 2.5, term_start: at(0), term_end: at(2000) },
  { booking_id: IDLE_BOOKING_ID, region: 'eu-west-1', fabric: 'ethernet', gpu: 'h100', nodes: 1, gpus_per_node: 8, rate_usd_per_gpu_hour: 2, term_start: at(0), term_end: at(1000) },
];

const r = { run_id: RUN_ID };
/** [seconds after T0, type, data] in ledger order. */
export const RUN_HISTORY: Array<[number, string, Record<string, unknown>]> = [
  [100, 'RunReserved', { ...r, booking_id: BOOKING_ID }],
  [100, 'RunConfirmed', { ...r, confirmation_ref: 'cfm_x' }],
  [110, 'StageStarted', { ...r, stage: 'data_prep' }],
  [150, 'StageCompleted', { ...r, stage: 'data_prep' }],
  [150, 'StageStarted', { ...r, stage: 'planning' }],
  [160, 'StageCompleted', { ...r, stage: 'planning' }],
  [160, 'StageStarted', { ...r, stage: 'pretrain', attempt: 1 }],
  [220, 'ProgressRecorded', { ...r, stage: 'pretrain', step: 10, tokens: 10 }],
  [320, 'ProgressRecorded', { ...r, stage: 'pretrain', step: 20, tokens: 20 }],
  [340, 'CheckpointSaved', { ...r, checkpoint_id: 'ck1', step: 20, uri: 'file:///c/1', bytes: 8e9, save_seconds: 20 }],
  [440, 'ProgressRecorded', { ...r, stage: 'pretrain', step: 30, tokens: 30 }],
  [500, 'NodeLost', { ...r, node_id: 'node_1', last_heartbeat_at: iso(470) }],
  [560, 'TaskFailed', { ...r, task_id: 't1', stage: 'pretrain', attempt: 1, node_id: 'node_1', seq: 9, failure: 'crash', reason: 'lost' }],
  [620, 'RunResumed', { ...r, from_checkpoint_id: 'ck1', stage: 'pretrain', attempt: 2, from_step: 20, recompute_steps: 10 }],
  [640, 'StageStarted', { ...r, stage: 'pretrain', attempt: 2 }],
  [670, 'CheckpointRestored', { ...r, checkpoint_id: 'ck1', step: 20, bytes: 8e9, restore_seconds: 10 }],
  [680, 'ProgressRecorded', { ...r, stage: 'pretrain', step: 21, tokens: 21 }],
  [770, 'ProgressRecorded', { ...r, stage: 'pretrain', step: 30, tokens: 30 }],
  [870, 'ProgressRecorded', { ...r, stage: 'pretrain', step: 40, tokens: 40 }],
  [900, 'CheckpointSaved', { ...r, checkpoint_id: 'ck2', step: 40, uri: 'file:///c/2', bytes: 8e9, save_seconds: 10, async: true }],
  [1000, 'TaskCompleted', { ...r, task_id: 't2', stage: 'pretrain', attempt: 2, node_id: 'node_1', seq: 20, elapsed_s: 360 }],
  [1000, 'StageCompleted', { ...r, stage: 'pretrain', attempt: 2 }],
  [1000, 'StageStarted', { ...r, stage: 'eval_pretrain' }],
  [1100, 'StageCompleted', { ...r, stage: 'eval_pretrain' }],
  [1100, 'RestartProposed', { ...r, from_checkpoint_id: 'ck2', reason: 'loss spike' }],
  [1300, 'RestartApproved', { ...r, confirmation_ref: 'cfm_y' }],
  [1320, 'StageStarted', { ...r, stage: 'sft' }],
  [1400, 'ProgressRecorded', { ...r, stage: 'sft', step: 50, tokens: 50 }],
  [1500, 'ProgressRecorded', { ...r, stage: 'sft', step: 60, tokens: 60 }],
  [1500, 'StageCompleted', { ...r, stage: 'sft' }],
  [1510, 'RunSucceeded', { ...r }],
];

export const RUN_EVENTS: TelemetryEvent[] = RUN_HISTORY.map(([s, type, data]) => ({ type, data, at: at(s) }));

/** Node-milliseconds of `s` seconds on the two-node booking. */
export const nodeMs = (s: number): number => s * 1000 * 2;
