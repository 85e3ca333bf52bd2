import { describe, expect, it } from 'vitest';
import { ItoError } from '@ito/contracts';
import { decideRun, foldRun, type RunEvent } from '@ito/domain';
import { pipelineFor } from './support/run-history.js';

const reserved: RunEvent[] = [
  {
    type: 'RunReserved',
    data: {
      run_id: 'run_1',
      tenant_id: 'ten_1',
      booking_id: 'bkg_1',
      manifest_digest: 'sha256:' + 'a'.repeat(64),
      idempotency_key: 'k1',
      confirmation_ref: 'cfm_1',
      estimated_cost_usd: 10,
      incremental_cost_usd: 1,
      plan: {},
    },
  },
  { type: 'RunConfirmed', data: { run_id: 'run_1', confirmation_ref: 'cfm_1' } },
];

function given(events: RunEvent[]) {
  return foldRun(events);
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ItoError) return err.code;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('run decider', () => {
  it('reserves and confirms a new run in one decision', () => {
    const events = decideRun({ type: 'ReserveRun', data: reserved[0]!.data as never, pipeline: pipelineFor() }, given([]));
    expect(events.map((e) => e.type)).toEqual(['RunReserved', 'RunConfirmed', 'PipelinePlanned']);
    expect(foldRun(events).status).toBe('confirmed');
  });

  it('refuses to reserve a run that exists', () => {
    expect(refusal(() => decideRun({ type: 'ReserveRun', data: reserved[0]!.data as never, pipeline: pipelineFor() }, given(reserved)))).toBe('invalid_state');
  });

  it('cancels a confirmed run with no workload at once', () => {
    const events = decideRun({ type: 'RequestCancel', data: { run_id: 'run_1', confirmation_ref: 'c', workload_started: false } }, given(reserved));
    expect(events.map((e) => e.type)).toEqual(['CancelRequested', 'RunCancelled']);
    expect(foldRun([...reserved, ...events]).status).toBe('cancelled');
  });

  it('leaves a running run cancelling until the orchestrator stops it', () => {
    const running: RunEvent[] = [...reserved, { type: 'StageStarted', data: { run_id: 'run_1', stage: 'pretrain' } }];
    const events = decideRun({ type: 'RequestCancel', data: { run_id: 'run_1', confirmation_ref: 'c', workload_started: true } }, given(running));
    expect(events.map((e) => e.type)).toEqual(['CancelRequested']);
    expect(foldRun([...running, ...events]).status).toBe('cancelling');
  });

  it('refuses to cancel a terminal run', () => {
    const cancelled: RunEvent[] = [...reserved, { type: 'RunCancelled', data: { run_id: 'run_1', reason: 'x' } }];
    expect(refusal(() => decideRun({ type: 'RequestCancel', data: { run_id: 'run_1', confirmation_ref: 'c', workload_started: false } }, given(cancelled)))).toBe(
      'invalid_state',
    );
  });

  it('a failed gate is terminal and cannot be restarted', () => {
    const failed: RunEvent[] = [...reserved, { type: 'EvalGateFailed', data: { run_id: 'run_1', stage: 'pretrain', metrics: { heldout_loss: 3 }, failed: ['heldout_loss'] } }];
    expect(given(failed).status).toBe('gate_failed');
    expect(refusal(() => decideRun({ type: 'ApproveRestart', data: { run_id: 'run_1', confirmation_ref: 'c' } }, given(failed)))).toBe('invalid_state');
  });

  it('cleanup needs a terminal run and lists what it removes', () => {
    expect(refusal(() => decideRun({ type: 'StartCleanup', data: { run_id: 'run_1', confirmation_ref: 'c', release_booking: false } }, given(reserved)))).toBe(
      'invalid_state',
    );
    const withCheckpoint: RunEvent[] = [
      ...reserved,
      { type: 'CheckpointSaved', data: { run_id: 'run_1', checkpoint_id: 'ck1', step: 10, uri: 's3://b/ck1', bytes: 5, save_seconds: 1 } },
      { type: 'RunFailed', data: { run_id: 'run_1', reason: 'x' } },
    ];
    const events = decideRun({ type: 'StartCleanup', data: { run_id: 'run_1', confirmation_ref: 'c', release_booking: false } }, given(withCheckpoint));
    expect(events).toEqual([{ type: 'CleanupStarted', data: { run_id: 'run_1', confirmation_ref: 'c', to_remove: ['s3://b/ck1'], release_booking: false } }]);
  });

  it('a restart is approved only while awaiting an operator, and returns to the stage it left', () => {
    const spiked: RunEvent[] = [
      ...reserved,
      { type: 'StageStarted', data: { run_id: 'run_1', stage: 'pretrain' } },
      { type: 'RestartProposed', data: { run_id: 'run_1', from_checkpoint_id: null, reason: 'loss spike' } },
    ];
    expect(given(spiked).status).toBe('awaiting_operator');
    const events = decideRun({ type: 'ApproveRestart', data: { run_id: 'run_1', confirmation_ref: 'c' } }, given(spiked));
    expect(foldRun([...spiked, ...events]).status).toBe('training');
  });

  it('an unknown run is not found', () => {
    expect(refusal(() => decideRun({ type: 'ApproveRestart', data: { run_id: 'run_x', confirmation_ref: 'c' } }, given([])))).toBe('not_found');
  });
});
