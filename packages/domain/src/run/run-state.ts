import { isTerminal, type RunState } from '@ito/contracts';
import { EMPTY_LOSS_TRACKER, observeLoss } from '../pipeline/loss-spike.js';
import type { CheckpointRef, IncidentFacts, RunEvent } from './run-events.js';
import { attemptCost } from './attempt-cost.js';
import { isRunOverOrCancelling } from './run-over.js';
import type { RunAggregate, RunCheckpoint, StageAttempt, TaskState } from './run-aggregate.js';

export type { RunAggregate, RunCheckpoint, StageAttempt, TaskState } from './run-aggregate.js';

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
    pipeline: null,
    plan: null,
    current: null,
    attempts: {},
    completedStages: [],
    spentUsd: 0,
    accruedUsd: 0,
    loss: EMPTY_LOSS_TRACKER,
    stopRequested: null,
    restart: null,
    cleanup: null,
    failure: null,
    ladderLosses: {},
    excludedNodes: [],
    suspectNodes: [],
    incident: null,
  };
}

function excluding(state: RunAggregate, nodeId: string, list: 'excludedNodes' | 'suspectNodes' = 'excludedNodes'): string[] {
  const nodes = state[list] ?? [];
  return nodes.includes(nodeId) ? nodes : [...nodes, nodeId];
}

/** The first failure of an attempt is the incident; later ones of the same attempt add nothing. */
function withIncident(state: RunAggregate, incident: IncidentFacts): IncidentFacts {
  return state.incident ?? incident;
}

/** The public state a stage puts the run in. */
export function stateForStage(stage: string): RunState {
  if (stage === 'data_prep' || stage.startsWith('ladder_')) return 'preparing_data';
  if (stage === 'planning') return 'planning';
  if (stage.startsWith('eval')) return 'evaluating';
  if (stage === 'sft' || stage === 'dpo' || stage === 'rlvr' || stage === 'post_training') return 'post_training';
  return 'training';
}

/** The attempt with a report received at `at` (ISO, the API's clock) counted as its latest. */
function reportedAt(attempt: StageAttempt, at: string | undefined): StageAttempt {
  const ms = at === undefined ? NaN : Date.parse(at);
  if (!Number.isFinite(ms)) return attempt;
  return { ...attempt, last_report_ms: Math.max(attempt.last_report_ms ?? ms, ms) };
}

function withCurrent(state: RunAggregate, current: StageAttempt): RunAggregate {
  return { ...state, current, spentUsd: (state.accruedUsd ?? 0) + attemptCost(state, current) };
}

function updateTask(current: StageAttempt, taskId: string, patch: Partial<TaskState>): StageAttempt {
  return { ...current, tasks: current.tasks.map((t) => (t.task_id === taskId ? { ...t, ...patch } : t)) };
}

/** The attempt a task report belongs to, or null when it belongs to an older one. */
function attemptOf(state: RunAggregate, taskId: string | undefined): StageAttempt | null {
  const current = state.current;
  if (!current || !taskId || !current.tasks.some((t) => t.task_id === taskId)) return null;
  return current;
}

function bumpSeq(state: RunAggregate, taskId: string | undefined, seq: number | undefined, patch: Partial<TaskState> = {}, receivedAt?: string): RunAggregate {
  const current = attemptOf(state, taskId);
  if (!current || !taskId) return state;
  return withCurrent(state, reportedAt(updateTask(current, taskId, { ...(seq !== undefined ? { last_seq: seq } : {}), ...patch }), receivedAt));
}

/** Ends the current attempt: its cost moves into the accrued total. */
function endAttempt(state: RunAggregate, status: StageAttempt['status']): RunAggregate {
  const current = state.current;
  if (!current) return state;
  return { ...state, current: { ...current, status }, accruedUsd: state.spentUsd ?? 0 };
}

function keepStatus(state: RunAggregate, status: RunState): RunState | 'none' {
  // Once terminal (or being cancelled or cleaned up), late task reports never change the public state.
  return state.status === 'none' || isRunOverOrCancelling(state) ? state.status : status;
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
    case 'PipelinePlanned':
      return { ...next, pipeline: event.data.pipeline };
    case 'PlanComputed':
      return { ...next, plan: event.data.plan };
    case 'DataRefChecked':
    case 'DataPrepared':
    case 'LadderDecision':
    case 'EvalGatePassed':
    case 'LossSpikeDetected':
      return next;
    case 'StageStarted': {
      const attempt = event.data.attempt ?? 1;
      const current: StageAttempt = {
        stage: event.data.stage,
        attempt,
        status: 'running',
        tasks: (event.data.tasks ?? []).map((t) => ({ ...t, status: 'assigned' as const, last_seq: 0 })),
        leader_elapsed_s: 0,
        resume_from: event.data.spec?.resume_from ?? null,
        total_steps: event.data.spec?.total_steps ?? null,
        last_step: null,
        started_at_ms: event.data.started_at !== undefined && Number.isFinite(Date.parse(event.data.started_at)) ? Date.parse(event.data.started_at) : null,
        last_report_ms: null,
      };
      const started: RunAggregate = {
        ...next,
        status: keepStatus(state, stateForStage(event.data.stage)),
        stage: event.data.stage,
        resumeTo: null,
        attempts: { ...(state.attempts ?? {}), [event.data.stage]: attempt },
        loss: EMPTY_LOSS_TRACKER,
        restart: null,
        accruedUsd: state.spentUsd ?? 0,
      };
      return withCurrent(started, current);
    }
    case 'StageCompleted': {
      const ended = endAttempt(next, 'completed');
      const loss = event.data.stage.startsWith('ladder_') ? event.data.metrics?.proxy_eval_loss : undefined;
      return {
        ...ended,
        completedStages: [...(state.completedStages ?? []), event.data.stage],
        ...(loss !== undefined ? { ladderLosses: { ...(state.ladderLosses ?? {}), [event.data.stage]: loss } } : {}),
      };
    }
    case 'StageFailed': {
      const failed = next.current && next.current.stage === event.data.stage && next.current.attempt === event.data.attempt;
      const ended = endAttempt(failed ? withCurrent(next, { ...next.current!, failure_reason: event.data.reason }) : next, 'failed');
      const status = keepStatus(state, 'recovering');
      return { ...ended, status, resumeTo: status === 'recovering' ? stateForStage(event.data.stage) : state.resumeTo };
    }
    case 'ProgressRecorded': {
      const progressed: RunAggregate = {
        ...next,
        progress: { stage: event.data.stage, step: event.data.step, tokens: event.data.tokens, loss: event.data.loss ?? null },
      };
      const current = attemptOf(state, event.data.task_id);
      if (!current || !event.data.task_id) return progressed;
      const loss =
        event.data.loss !== undefined && state.pipeline
          ? observeLoss(state.pipeline.rules.loss_spike, state.loss ?? EMPTY_LOSS_TRACKER, event.data.step, event.data.loss).tracker
          : state.loss;
      const updated = updateTask(current, event.data.task_id, { last_seq: event.data.seq ?? 0, status: 'running' });
      return withCurrent({ ...progressed, loss }, reportedAt({ ...updated, leader_elapsed_s: Math.max(current.leader_elapsed_s, event.data.elapsed_s ?? 0), last_step: event.data.step }, event.data.received_at));
    }
    case 'CheckpointSaved': {
      const d = event.data;
      const saved: RunAggregate = {
        ...next,
        checkpoints: [
          ...state.checkpoints,
          {
            checkpoint_id: d.checkpoint_id,
            step: d.step,
            uri: d.uri,
            bytes: d.bytes,
            save_seconds: d.save_seconds,
            ...(d.stage !== undefined ? { stage: d.stage } : {}),
            ...(d.attempt !== undefined ? { attempt: d.attempt } : {}),
            ...(d.final ? { final: true } : {}),
            ...(d.simulated ? { simulated: true } : {}),
          },
        ],
      };
      return bumpSeq(saved, d.task_id, d.seq);
    }
    case 'CheckpointDeleted':
      return { ...next, checkpoints: state.checkpoints.filter((c) => c.checkpoint_id !== event.data.checkpoint_id) };
    case 'TaskCompleted': {
      const current = attemptOf(state, event.data.task_id);
      if (!current) return next;
      const updated = updateTask(current, event.data.task_id, { last_seq: event.data.seq, status: 'completed' });
      return withCurrent(next, reportedAt({ ...updated, leader_elapsed_s: Math.max(current.leader_elapsed_s, event.data.elapsed_s) }, event.data.received_at));
    }
    case 'TaskFailed': {
      const d = event.data;
      const failed = bumpSeq(next, d.task_id, d.seq, { status: 'failed' }, d.detected_at);
      return {
        ...failed,
        excludedNodes: d.failure === 'gpu_fault' ? excluding(state, d.node_id) : (state.excludedNodes ?? []),
        incident: d.detected_at
          ? withIncident(state, { kind: d.failure, node_id: d.node_id, task_id: d.task_id, evidence_at: d.detected_at, detected_at: d.detected_at })
          : (state.incident ?? null),
      };
    }
    case 'TaskStopped':
      return bumpSeq(next, event.data.task_id, event.data.seq, { status: 'stopped' }, event.data.received_at);
    case 'TasksWithdrawn': {
      const current = state.current;
      if (!current || current.stage !== event.data.stage || current.attempt !== event.data.attempt) return next;
      const tasks = current.tasks.map((t) => (event.data.task_ids.includes(t.task_id) && t.status !== 'completed' && t.status !== 'stopped' ? { ...t, status: 'withdrawn' as const } : t));
      const withdrawn = withCurrent(next, { ...current, tasks });
      return current.status === 'running' ? endAttempt(withdrawn, 'withdrawn') : withdrawn;
    }
    case 'EvalGateFailed':
      return { ...next, status: 'gate_failed', terminal: 'gate_failed' };
    case 'NodeLost':
    case 'TaskHung': {
      const d = event.data;
      const status = keepStatus(state, 'recovering');
      const detectedAt = d.detected_at ?? null;
      const evidence = event.type === 'TaskHung' ? event.data.last_progress_at : event.data.last_heartbeat_at;
      return {
        ...next,
        status,
        resumeTo: state.status === 'recovering' ? state.resumeTo : (state.status as RunState),
        ...(event.type === 'TaskHung' ? { suspectNodes: excluding(state, d.node_id, 'suspectNodes') } : { excludedNodes: excluding(state, d.node_id) }),
        incident: detectedAt
          ? withIncident(state, { kind: event.type === 'TaskHung' ? 'hang' : 'node_lost', node_id: d.node_id, ...(d.task_id ? { task_id: d.task_id } : {}), evidence_at: evidence, detected_at: detectedAt })
          : (state.incident ?? null),
      };
    }
    case 'NodeRecovered':
      return { ...next, excludedNodes: (state.excludedNodes ?? []).filter((n) => n !== event.data.node_id) };
    case 'CheckpointRestored':
      return bumpSeq(next, event.data.task_id, event.data.seq, { restored: true });
    case 'SloBreached':
      return next;
    case 'RunResumed':
      return { ...next, status: keepStatus(state, state.resumeTo ?? (state.stage ? stateForStage(state.stage) : 'training')), resumeTo: null, incident: null };
    case 'RestartProposed': {
      const status = keepStatus(state, 'awaiting_operator');
      return {
        ...next,
        status,
        resumeTo: state.status === 'awaiting_operator' ? state.resumeTo : (state.status as RunState),
        restart: {
          from: refOf(state.checkpoints.find((c) => c.checkpoint_id === event.data.from_checkpoint_id)),
          skip_steps: event.data.skip_steps ?? null,
          stage: event.data.stage ?? state.stage ?? '',
          approved: false,
        },
      };
    }
    case 'RestartApproved':
      return {
        ...next,
        status: keepStatus(state, state.resumeTo ?? 'training'),
        resumeTo: null,
        restart: state.restart ? { ...state.restart, approved: true } : null,
      };
    case 'StopRequested':
      return { ...next, stopRequested: { reason: event.data.reason, spent_usd: event.data.spent_usd, ceiling_usd: event.data.ceiling_usd } };
    case 'CancelRequested':
      return { ...next, status: 'cancelling' };
    case 'RunCancelled':
      return { ...next, status: 'cancelled', terminal: 'cancelled' };
    case 'CleanupStarted':
      return {
        ...next,
        status: 'cleaning_up',
        terminal: state.terminal ?? (isTerminalStatus(state.status) ? state.status : null),
        cleanup: { to_remove: event.data.to_remove, done: false, release_booking: event.data.release_booking },
      };
    case 'CleanupCompleted':
      return { ...next, status: 'cleaned', cleanup: { to_remove: state.cleanup?.to_remove ?? [], done: true, release_booking: event.data.booking_released } };
    case 'RunSucceeded':
      return { ...next, status: 'succeeded', terminal: 'succeeded' };
    case 'RunFailed':
      return { ...next, status: 'failed', terminal: 'failed', failure: { reason: event.data.reason, ...(event.data.code ? { code: event.data.code } : {}) } };
    case 'BudgetExhausted':
      return { ...next, status: 'failed', terminal: 'failed', failure: state.failure ?? { reason: 'budget exhausted', code: 'budget_exceeded' } };
    default: {
      const never: never = event;
      return never;
    }
  }
}

function refOf(c: RunCheckpoint | undefined): CheckpointRef | null {
  return c ? { checkpoint_id: c.checkpoint_id, uri: c.uri, step: c.step } : null;
}

function isTerminalStatus(status: RunAggregate['status']): status is RunState {
  return status !== 'none' && isTerminal(status);
}

/** An aggregate read back from storage, with the fields added since it was written filled in. */
export function normalizeRunAggregate(stored: Partial<RunAggregate>): RunAggregate {
  return { ...initialRunState(), ...stored };
}

export function foldRun(events: readonly RunEvent[]): RunAggregate {
  return events.reduce(evolveRun, initialRunState());
}
