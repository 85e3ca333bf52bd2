import { isTerminal, type RunState } from '@ito/contracts';
import type { RunEvent } from './run-events.js';

/** The run aggregate's state, folded from its stream. `status` is the public state enum. */
export interface RunAggregate {
  status: RunState | 'none';
  runId: string | null;
  bookingId: string | null;
  manifestDigest: string | null;
  idempotencyKey: string | null;
  stage: string | null;
  checkpoints: Array<{ checkpoint_id: string; step: number; uri: string; bytes: number }>;
  /** The latest progress an agent reported, for status displays. */
  progress: { stage: string; step: number; tokens: number; loss: number | null } | null;
  /** The state to return to once a recovery or operator wait ends. */
  resumeTo: RunState | null;
  terminal: RunState | null;
  version: number;
}

export function initialRunState(): RunAggregate {
  return {
    status: 'none',
    runId: null,
    bookingId: null,
    manifestDigest: null,
    idempotencyKey: null,
    stage: null,
    checkpoints: [],
    progress: null,
    resumeTo: null,
    terminal: null,
    version: 0,
  };
}

/** The stage name a StageStarted moves the run to; unknown stages keep the run in training. */
function stateForStage(stage: string): RunState {
  switch (stage) {
    case 'data_prep':
      return 'preparing_data';
    case 'planning':
      return 'planning';
    case 'evaluation':
      return 'evaluating';
    case 'sft':
    case 'dpo':
    case 'rlvr':
    case 'post_training':
      return 'post_training';
    default:
      return 'training';
  }
}

export function evolveRun(state: RunAggregate, event: RunEvent): RunAggregate {
  const next: RunAggregate = { ...state, version: state.version + 1 };
  switch (event.type) {
    case 'RunReserved':
      return {
        ...next,
        status: 'reserved',
        runId: event.data.run_id,
        bookingId: event.data.booking_id,
        manifestDigest: event.data.manifest_digest,
        idempotencyKey: event.data.idempotency_key,
      };
    case 'RunConfirmed':
      return { ...next, status: 'confirmed' };
    case 'StageStarted':
      return { ...next, status: stateForStage(event.data.stage), stage: event.data.stage };
    case 'ProgressRecorded':
      return {
        ...next,
        progress: { stage: event.data.stage, step: event.data.step, tokens: event.data.tokens, loss: event.data.loss ?? null },
      };
    case 'StageCompleted':
    case 'EvalGatePassed':
      return next;
    case 'CheckpointSaved':
      return {
        ...next,
        checkpoints: [
          ...state.checkpoints,
          { checkpoint_id: event.data.checkpoint_id, step: event.data.step, uri: event.data.uri, bytes: event.data.bytes },
        ],
      };
    case 'EvalGateFailed':
      return { ...next, status: 'gate_failed', terminal: 'gate_failed' };
    case 'NodeLost':
      return { ...next, status: 'recovering', resumeTo: state.status === 'recovering' ? state.resumeTo : (state.status as RunState) };
    case 'RunResumed':
    case 'RestartApproved':
      return { ...next, status: state.resumeTo ?? 'training', resumeTo: null };
    case 'LossSpikeDetected':
      return next;
    case 'RestartProposed':
      return { ...next, status: 'awaiting_operator', resumeTo: state.status === 'awaiting_operator' ? state.resumeTo : (state.status as RunState) };
    case 'CancelRequested':
      return { ...next, status: 'cancelling' };
    case 'RunCancelled':
      return { ...next, status: 'cancelled', terminal: 'cancelled' };
    case 'CleanupStarted':
      return { ...next, status: 'cleaning_up', terminal: state.terminal ?? (isTerminalStatus(state.status) ? state.status : null) };
    case 'CleanupCompleted':
      return { ...next, status: 'cleaned' };
    case 'RunSucceeded':
      return { ...next, status: 'succeeded', terminal: 'succeeded' };
    case 'RunFailed':
    case 'BudgetExhausted':
      return { ...next, status: 'failed', terminal: 'failed' };
    default: {
      const never: never = event;
      return never;
    }
  }
}

function isTerminalStatus(status: RunAggregate['status']): status is RunState {
  return status !== 'none' && isTerminal(status);
}

export function foldRun(events: readonly RunEvent[]): RunAggregate {
  return events.reduce(evolveRun, initialRunState());
}
