import { ItoError, gatedStageOf, stageKind, type CheckpointBody, type CompleteBody, type Directive, type EvalStage, type FailBody, type ProgressBody, type RestoredBody, type StageName } from '@ito/contracts';
import { evaluateGates } from '../pipeline/gates.js';
import { DEFAULT_LADDER_RULE, LADDER_METRIC, decideLadder } from '../pipeline/ladder.js';
import { EMPTY_LOSS_TRACKER, observeLoss } from '../pipeline/loss-spike.js';
import type { RunEvent } from './run-events.js';
import { evolveRun, type RunAggregate, type StageAttempt, type TaskState } from './run-state.js';
import { checkpointPrefix, isInsidePrefix } from './checkpoint-uris.js';
import { isRunOver, isRunOverOrCancelling } from './run-over.js';

/** A report from a node agent about one of its tasks, after the API checked that the task is the node's. */
export type TaskReport =
  | { type: 'progress'; task_id: string; node_id: string; body: ProgressBody }
  | { type: 'checkpoint'; task_id: string; node_id: string; checkpoint_id: string; body: CheckpointBody }
  | { type: 'restored'; task_id: string; node_id: string; body: RestoredBody }
  | { type: 'complete'; task_id: string; node_id: string; body: CompleteBody }
  | { type: 'fail'; task_id: string; node_id: string; body: FailBody };

export interface ReportDecision {
  events: RunEvent[];
  /** The report repeated one already recorded: nothing is appended. */
  duplicate: boolean;
  directive: Directive;
}

const ENDED: ReadonlyArray<TaskState['status']> = ['completed', 'failed', 'stopped'];

function superseded(taskId: string): never {
  throw new ItoError('invalid_state', `task ${taskId} is not the current attempt of its stage; stop it`, { directive: 'stop' });
}

/** Fencing: the task must belong to the run's current attempt, with the attempt number the report names. */
function fenced(state: RunAggregate, report: TaskReport): { current: StageAttempt; task: TaskState } {
  const current = state.current;
  const task = current?.tasks.find((t) => t.task_id === report.task_id);
  if (!current || !task || current.attempt !== report.body.attempt || task.node_id !== report.node_id) superseded(report.task_id);
  return { current, task };
}

/** What the control plane wants of this task now, judged on the state after the report. */
export function directiveFor(state: RunAggregate, taskId: string): Directive {
  const task = state.current?.tasks.find((t) => t.task_id === taskId);
  if (!task || task.status === 'withdrawn' || ENDED.includes(task.status)) return 'stop';
  if (isRunOverOrCancelling(state) || state.status === 'awaiting_operator') return 'stop';
  if (state.stopRequested) {
    const finalSaved = state.checkpoints.some((c) => c.final && c.stage === state.current?.stage && c.attempt === state.current?.attempt);
    return task.rank === 0 && !finalSaved ? 'checkpoint_and_stop' : 'stop';
  }
  return 'continue';
}

function activeTaskIds(current: StageAttempt, except?: string): string[] {
  return current.tasks.filter((t) => t.task_id !== except && (t.status === 'assigned' || t.status === 'running')).map((t) => t.task_id);
}

/**
 * Decides what a task report appends. Fenced by attempt (a superseded task's reports are refused with
 * `invalid_state`, which tells the agent to stop it), deduplicated by the agent's sequence number, and the
 * consequences decided here in the same breath: a loss spike proposes a restart, spending the ceiling asks for
 * a final checkpoint, the last task of an attempt completes its stage (and an evaluation's gate), a failed task
 * fails its attempt. Pure.
 */
export function decideTaskReport(state: RunAggregate, report: TaskReport, now?: Date): ReportDecision {
  const runId = state.runId;
  if (!runId || !state.pipeline) throw new ItoError('not_found', `task ${report.task_id} not found`);
  const { current, task } = fenced(state, report);
  if (report.body.seq <= task.last_seq) return { events: [], duplicate: true, directive: directiveFor(state, task.task_id) };

  // An ended task takes no further reports; a withdrawn one (or one of an attempt that ended) may only confirm
  // that it stopped.
  if (ENDED.includes(task.status)) superseded(task.task_id);
  const stoppedAck = report.type === 'fail' && report.body.kind === 'stopped';
  // A withdrawal always ends its attempt (run-state's TasksWithdrawn), so this covers withdrawn tasks too.
  if (current.status !== 'running' && !stoppedAck) superseded(task.task_id);
  if (isRunOver(state) && !stoppedAck) superseded(task.task_id);

  const base = { run_id: runId, task_id: task.task_id, stage: current.stage, attempt: current.attempt };
  // The API's own clock at receipt: what the attempt's node time is charged by (the trainer's elapsed_s is a claim).
  const received = now ? { received_at: now.toISOString() } : {};
  const events: RunEvent[] = [];
  switch (report.type) {
    case 'progress':
      events.push(...progressEvents(state, current, task, report.body, received));
      break;
    case 'checkpoint': {
      const prefix = checkpointPrefix(state.pipeline.checkpoint.storage, runId);
      if (!isInsidePrefix(report.body.uri, prefix)) {
        throw new ItoError('validation_failed', `a checkpoint of run ${runId} must be stored under ${prefix}`);
      }
      const b = report.body;
      events.push({
        type: 'CheckpointSaved',
        data: {
          run_id: runId,
          checkpoint_id: report.checkpoint_id,
          step: b.step,
          uri: b.uri,
          bytes: b.bytes,
          save_seconds: b.save_seconds,
          stage: current.stage,
          attempt: current.attempt,
          task_id: task.task_id,
          seq: b.seq,
          async: b.async,
          ...(b.final ? { final: true } : {}),
          ...(b.simulated ? { simulated: true } : {}),
        },
      });
      break;
    }
    case 'restored': {
      // Only the checkpoint this attempt was told to resume from, once per task: a second report is no news.
      const from = current.resume_from;
      const b = report.body;
      if (!from || from.checkpoint_id !== b.checkpoint_id || from.step !== b.step) {
        throw new ItoError('validation_failed', `attempt ${current.attempt} of ${current.stage} resumes from ${from ? `checkpoint ${from.checkpoint_id} at step ${from.step}` : 'no checkpoint'}`);
      }
      if (task.restored) return { events: [], duplicate: true, directive: directiveFor(state, task.task_id) };
      events.push({ type: 'CheckpointRestored', data: { ...base, checkpoint_id: b.checkpoint_id, step: b.step, bytes: b.bytes, restore_seconds: b.restore_seconds, seq: b.seq } });
      break;
    }
    case 'complete':
      events.push(...completionEvents(state, current, task, report.body, received));
      break;
    case 'fail': {
      const b = report.body;
      // Stopped because the control plane said so (withdrawn, cancelling, budget, operator wait): an
      // acknowledgement. Stopped on its own (the agent shutting down) is a hand-back: the attempt failed.
      if (b.kind === 'stopped' && directiveFor(state, task.task_id) !== 'continue') {
        events.push({ type: 'TaskStopped', data: { ...base, node_id: task.node_id, seq: b.seq, reason: b.reason, ...(b.step !== undefined ? { step: b.step } : {}), ...(b.elapsed_s !== undefined ? { elapsed_s: b.elapsed_s } : {}), ...received } });
        break;
      }
      // A crash, a GPU fault, or a task the agent handed back on its own (shutting down): the attempt failed.
      events.push({
        type: 'TaskFailed',
        data: {
          ...base,
          node_id: task.node_id,
          seq: b.seq,
          failure: b.kind,
          reason: b.reason,
          ...(b.step !== undefined ? { step: b.step } : {}),
          ...(b.elapsed_s !== undefined ? { elapsed_s: b.elapsed_s } : {}),
          // The agent reports a crash the moment it sees it: receiving the report is detecting it.
          ...(now ? { detected_at: now.toISOString() } : {}),
        },
      });
      if (!state.stopRequested) {
        const others = activeTaskIds(current, task.task_id);
        if (others.length > 0) events.push({ type: 'TasksWithdrawn', data: { run_id: runId, stage: current.stage, attempt: current.attempt, task_ids: others, reason: `task ${task.task_id} failed` } });
        events.push({ type: 'StageFailed', data: { run_id: runId, stage: current.stage, attempt: current.attempt, reason: b.reason, task_id: task.task_id, node_id: task.node_id, failure: b.kind } });
      }
      break;
    }
    default: {
      const never: never = report;
      return never;
    }
  }
  const after = events.reduce(evolveRun, state);
  return { events, duplicate: false, directive: directiveFor(after, task.task_id) };
}

/**
 * A progress step is bounded by the stage's plan (a trainer cannot claim steps the stage does not have) and never
 * goes back within an attempt (a restart is a new attempt, which starts its own count). Refused before anything
 * is recorded: the desk folds recorded steps into goodput and wasted progress.
 */
export function checkProgressStep(current: StageAttempt, step: number): void {
  const total = current.total_steps ?? null;
  // An evaluation's plan has no steps (total 0): its steps are not bounded by the plan, only kept monotonic.
  if (total !== null && total > 0 && step > total) {
    throw new ItoError('validation_failed', `progress at step ${step} is beyond the ${total} steps of stage ${current.stage}'s plan; nothing was recorded`);
  }
  const last = current.last_step ?? null;
  if (last !== null && step < last) {
    throw new ItoError('validation_failed', `progress at step ${step} goes back from step ${last} in attempt ${current.attempt} of ${current.stage}; nothing was recorded`);
  }
}

function progressEvents(state: RunAggregate, current: StageAttempt, task: TaskState, b: ProgressBody, received: { received_at?: string }): RunEvent[] {
  const runId = state.runId!;
  // Followers' progress keeps them alive but is not the run's progress: rank 0 speaks for the stage.
  if (task.rank !== 0) return [];
  checkProgressStep(current, b.step);
  const recorded: RunEvent = {
    type: 'ProgressRecorded',
    data: {
      run_id: runId,
      stage: current.stage,
      attempt: current.attempt,
      task_id: task.task_id,
      seq: b.seq,
      step: b.step,
      tokens: b.tokens,
      elapsed_s: b.elapsed_s,
      ...(b.loss !== undefined ? { loss: b.loss } : {}),
      ...(b.throughput_tokens_per_s !== undefined ? { throughput_tokens_per_s: b.throughput_tokens_per_s } : {}),
      ...(b.message !== undefined ? { message: b.message } : {}),
      ...received,
    },
  };
  const events: RunEvent[] = [recorded];
  const rule = state.pipeline!.rules.loss_spike;
  const observed = b.loss !== undefined && !state.stopRequested ? observeLoss(rule, state.loss ?? EMPTY_LOSS_TRACKER, b.step, b.loss) : null;
  if (observed?.spike) {
    // A checkpoint at step s holds the updates of steps 1…s; the first spiking step's update must not be in it.
    const from = [...state.checkpoints].filter((c) => c.stage === current.stage && c.step < observed.spike!.from_step).sort((a, c) => c.step - a.step)[0] ?? null;
    events.push(
      {
        type: 'LossSpikeDetected',
        data: { run_id: runId, stage: current.stage, attempt: current.attempt, step: b.step, loss: b.loss!, moving_average: observed.spike.moving_average, factor: rule.factor, consecutive: rule.consecutive },
      },
      {
        type: 'RestartProposed',
        data: {
          run_id: runId,
          stage: current.stage,
          from_checkpoint_id: from?.checkpoint_id ?? null,
          from_step: from?.step ?? 0,
          skip_steps: { from: observed.spike.from_step, to: b.step + 1 },
          reason: `loss ${b.loss} at step ${b.step} stayed above ${rule.factor} × its moving average ${observed.spike.moving_average.toFixed(4)} for ${rule.consecutive} reports; restart from ${from ? `checkpoint ${from.checkpoint_id} (step ${from.step})` : 'the start of the stage'} skipping steps ${observed.spike.from_step}–${b.step}`,
        },
      },
      { type: 'TasksWithdrawn', data: { run_id: runId, stage: current.stage, attempt: current.attempt, task_ids: activeTaskIds(current), reason: 'loss spike: waiting for an operator' } },
    );
    return events;
  }
  // The budget: node time spent so far, at the booking's rate, against the manifest's ceiling.
  const after = evolveRun(state, recorded);
  const ceiling = state.pipeline!.budget.ceiling_usd;
  if (!state.stopRequested && after.spentUsd >= ceiling) {
    events.push({ type: 'StopRequested', data: { run_id: runId, reason: 'budget_exhausted', spent_usd: round2(after.spentUsd), ceiling_usd: ceiling } });
  }
  return events;
}

function completionEvents(state: RunAggregate, current: StageAttempt, task: TaskState, b: CompleteBody, received: { received_at?: string }): RunEvent[] {
  const runId = state.runId!;
  const events: RunEvent[] = [
    {
      type: 'TaskCompleted',
      data: {
        run_id: runId,
        task_id: task.task_id,
        stage: current.stage,
        attempt: current.attempt,
        node_id: task.node_id,
        seq: b.seq,
        elapsed_s: b.elapsed_s,
        ...(b.step !== undefined ? { step: b.step } : {}),
        ...(b.metrics ? { metrics: b.metrics } : {}),
        ...received,
      },
    },
  ];
  if (activeTaskIds(current, task.task_id).length > 0 || state.stopRequested) return events;
  const stage = current.stage as StageName;
  const metrics = b.metrics ?? {};
  const kind = stageKind(stage);
  events.push({ type: 'StageCompleted', data: { run_id: runId, stage, attempt: current.attempt, ...(kind === 'eval' || kind === 'ladder' ? { metrics } : {}) } });
  if (stage === 'ladder_reference') events.push(...ladderDecisionEvents(state, metrics));
  if (stageKind(stage) === 'eval') {
    const step = state.pipeline!.steps.find((s) => s.stage === stage);
    const verdict = evaluateGates(step?.gates ?? {}, metrics);
    const gated = gatedStageOf(stage as EvalStage);
    events.push(
      verdict.passed
        ? { type: 'EvalGatePassed', data: { run_id: runId, stage: gated, metrics } }
        : { type: 'EvalGateFailed', data: { run_id: runId, stage: gated, metrics, failed: verdict.failed } },
    );
  }
  return events;
}

/**
 * Both proxies have run (custom first, then reference): record both figures and the verdict; a failing custom mix
 * ends the run before any large stage is scheduled.
 */
function ladderDecisionEvents(state: RunAggregate, metrics: Record<string, number>): RunEvent[] {
  const runId = state.runId!;
  const rule = state.pipeline!.rules.ladder ?? DEFAULT_LADDER_RULE;
  const custom = (state.ladderLosses ?? {}).ladder_custom;
  const reference = Object.hasOwn(metrics, LADDER_METRIC) ? metrics[LADDER_METRIC] : undefined;
  const verdict = decideLadder(rule, custom, reference);
  const customRefs = state.pipeline!.steps.find((s) => s.stage === 'ladder_custom')?.ladder?.data_refs ?? [];
  const events: RunEvent[] = [
    {
      type: 'LadderDecision',
      data: { run_id: runId, custom_loss: custom ?? null, reference_loss: reference ?? null, rule: verdict.rule, tolerance: rule.tolerance, passed: verdict.passed, custom_refs: customRefs },
    },
  ];
  if (!verdict.passed) events.push({ type: 'RunFailed', data: { run_id: runId, reason: verdict.reason, code: 'data_policy_violation' } });
  return events;
}

function round2(v: number): number {
  return Math.round(v * 100) / 100;
}
