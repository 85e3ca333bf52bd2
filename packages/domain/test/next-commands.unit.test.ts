import { describe, expect, it } from 'vitest';
import { commandKey, foldRun, nextCommands, taskIdFor, type PipelineCommand, type RunEvent } from '@ito/domain';
import { RUN, pipelineFor, planned, reserved, started } from './support/run-history.js';

/**
 * The orchestrator decider beyond the happy path: which checkpoint a retry starts from, what pruning keeps, the
 * budget stop, cleanup, and the states in which nothing may start. Each case is a state the worker can meet.
 */
const CKPT = (n: number) => `ckpt_${String(n).padStart(32, '0')}`;

function saved(stage: string, step: number, id = step): RunEvent {
  return { type: 'CheckpointSaved', data: { run_id: RUN, checkpoint_id: CKPT(id), step, uri: `s3://b/${stage}/${step}`, bytes: 1, save_seconds: 1, stage, attempt: 1 } };
}

function stageFailed(stage: string, attempt = 1): RunEvent {
  return { type: 'StageFailed', data: { run_id: RUN, stage, attempt, reason: 'crash' } };
}

function stageCompleted(stage: string, attempt = 1): RunEvent {
  return { type: 'StageCompleted', data: { run_id: RUN, stage, attempt } };
}

const pruneUris = (cmds: PipelineCommand[]) => cmds.flatMap((c) => (c.type === 'PruneCheckpoint' ? [c.uri] : []));

describe('job ids: every command has a stable key, so enqueueing a decision twice is harmless', () => {
  it('names each command kind distinctly, a stage start by stage and attempt, a prune by its checkpoint', () => {
    const commands: PipelineCommand[] = [
      { type: 'StartStage', stage: 'pretrain', attempt: 2, resume: null },
      { type: 'PruneCheckpoint', checkpoint_id: CKPT(7), uri: 's3://b/7' },
      { type: 'SucceedRun' },
      { type: 'FailRun', reason: 'x' },
      { type: 'FinishCancel' },
      { type: 'FinishBudgetStop' },
      { type: 'CleanupCheckpoints' },
    ];
    expect(commands.map(commandKey)).toEqual(['pretrain@2', `prune-${CKPT(7)}`, 'succeed', 'fail', 'cancel', 'budget', 'cleanup']);
  });
});

describe('a retry starts from the failed stage`s newest checkpoint', () => {
  it('ignores a later step saved by an earlier stage, and checkpoints that landed out of order', () => {
    let h = started(planned(), 'pretrain');
    h = [...h, saved('pretrain', 900, 1), stageCompleted('pretrain')];
    h = started(h, 'mid_train');
    // Asynchronous saves can land out of order: step 200 is recorded after step 400.
    h = [...h, saved('mid_train', 300, 3), saved('mid_train', 400, 2), saved('mid_train', 200, 4), stageFailed('mid_train')];
    const [retry] = nextCommands(foldRun(h)).filter((c) => c.type === 'StartStage');
    expect(retry).toMatchObject({ stage: 'mid_train', attempt: 2, resume: { from: { checkpoint_id: CKPT(2), step: 400 }, reason: 'retry' } });
  });

  it('starts from scratch when the failed stage saved nothing', () => {
    const h = [...started(planned(), 'pretrain'), stageFailed('pretrain')];
    expect(nextCommands(foldRun(h))).toEqual([{ type: 'StartStage', stage: 'pretrain', attempt: 2, resume: { from: null, skip_steps: null, recompute_steps: 0, reason: 'retry' } }]);
  });
});

describe('pruning keeps the newest keep_last checkpoints (3 in the example)', () => {
  it('prunes nothing while there are keep_last or fewer', () => {
    for (const count of [1, 2, 3]) {
      let h = started(planned(), 'pretrain');
      for (let i = 1; i <= count; i++) h = [...h, saved('pretrain', i * 100)];
      expect(pruneUris(nextCommands(foldRun(h))), `${count} checkpoints`).toEqual([]);
    }
  });
});

describe('nothing starts where the run cannot go on', () => {
  const withFive = () => {
    let h = started(planned(), 'pretrain');
    for (const step of [100, 200, 300, 400, 500]) h = [...h, saved('pretrain', step)];
    return h;
  };

  it('a pipeline recorded without a reservation starts nothing', () => {
    const lone: RunEvent[] = [{ type: 'PipelinePlanned', data: { run_id: RUN, pipeline: pipelineFor() } }];
    expect(foldRun(lone).status).toBe('none');
    expect(nextCommands(foldRun(lone))).toEqual([]);
  });

  it('an ended run neither prunes nor starts, whatever checkpoints are left', () => {
    const h = withFive();
    expect(nextCommands(foldRun(h)).length).toBe(2);
    expect(nextCommands(foldRun([...h, { type: 'RunSucceeded', data: { run_id: RUN } }]))).toEqual([]);
    expect(nextCommands(foldRun([...h, { type: 'RunCancelled', data: { run_id: RUN, reason: 'asked' } }]))).toEqual([]);
  });

  it('cleanup runs once, while it is not done; a cleaned run does nothing', () => {
    const ended: RunEvent[] = [...withFive(), { type: 'RunSucceeded', data: { run_id: RUN } }];
    const cleaning: RunEvent[] = [...ended, { type: 'CleanupStarted', data: { run_id: RUN, confirmation_ref: 'c', to_remove: ['s3://b/pretrain/100'], release_booking: false } }];
    expect(nextCommands(foldRun(cleaning))).toEqual([{ type: 'CleanupCheckpoints' }]);
    const cleaned: RunEvent[] = [...cleaning, { type: 'CleanupCompleted', data: { run_id: RUN, removed: ['s3://b/pretrain/100'], booking_released: false } }];
    expect(foldRun(cleaned).status).toBe('cleaned');
    expect(nextCommands(foldRun(cleaned))).toEqual([]);
    // A cleanup that went back to cleaning_up after it was done (a second CleanupStarted refused upstream) never
    // runs twice.
    const state = foldRun(cleaned);
    expect(nextCommands({ ...state, status: 'cleaning_up' })).toEqual([]);
  });

  it('waiting for an operator blocks the automatic retry of a failed attempt', () => {
    const h: RunEvent[] = [...withFive(), stageFailed('pretrain'), { type: 'RestartProposed', data: { run_id: RUN, stage: 'pretrain', from_checkpoint_id: CKPT(500), reason: 'spike' } }];
    expect(foldRun(h).status).toBe('awaiting_operator');
    expect(nextCommands(foldRun(h))).toEqual([
      { type: 'PruneCheckpoint', checkpoint_id: CKPT(100), uri: 's3://b/pretrain/100' },
      { type: 'PruneCheckpoint', checkpoint_id: CKPT(200), uri: 's3://b/pretrain/200' },
    ]);
  });
});

describe('a budget stop finishes once every task has ended', () => {
  const T0 = taskIdFor(RUN, 'pretrain', 1, 0);
  const T1 = taskIdFor(RUN, 'pretrain', 1, 1);
  const stop: RunEvent = { type: 'StopRequested', data: { run_id: RUN, reason: 'budget_exhausted', spent_usd: 100, ceiling_usd: 100 } };
  const stopped = (task: string, seq: number): RunEvent => ({ type: 'TaskStopped', data: { run_id: RUN, task_id: task, stage: 'pretrain', attempt: 1, node_id: 'n', seq, reason: 'asked' } });

  it('waits while a task is still assigned or running, pruning meanwhile', () => {
    let h = started(planned(), 'pretrain');
    for (const step of [100, 200, 300, 400]) h = [...h, saved('pretrain', step)];
    // Rank 1 is running (it reported), rank 0 only assigned.
    h = [...h, { type: 'ProgressRecorded', data: { run_id: RUN, stage: 'pretrain', attempt: 1, task_id: T1, seq: 1, step: 5, tokens: 1, elapsed_s: 1 } }, stop];
    expect(foldRun(h).current!.tasks.map((t) => t.status)).toEqual(['assigned', 'running']);
    expect(nextCommands(foldRun(h))).toEqual([{ type: 'PruneCheckpoint', checkpoint_id: CKPT(100), uri: 's3://b/pretrain/100' }]);
    // Only the running task left: still waiting.
    const runningLeft = [...h, stopped(T0, 5)];
    expect(nextCommands(foldRun(runningLeft)).map((c) => c.type)).toEqual(['PruneCheckpoint']);
    // Only the assigned task left: still waiting.
    const assignedLeft = [...h, stopped(T1, 5)];
    expect(foldRun(assignedLeft).current!.tasks.map((t) => t.status)).toEqual(['assigned', 'stopped']);
    expect(nextCommands(foldRun(assignedLeft)).map((c) => c.type)).toEqual(['PruneCheckpoint']);
    h = [...runningLeft, stopped(T1, 5)];
    expect(nextCommands(foldRun(h))).toEqual([{ type: 'PruneCheckpoint', checkpoint_id: CKPT(100), uri: 's3://b/pretrain/100' }, { type: 'FinishBudgetStop' }]);
  });

  it('finishes at once when no stage was running', () => {
    const h: RunEvent[] = [...reserved(), stop];
    expect(nextCommands(foldRun(h))).toEqual([{ type: 'FinishBudgetStop' }]);
  });
});

describe('an empty pipeline', () => {
  it('succeeds at once', () => {
    const state = foldRun(reserved());
    expect(nextCommands({ ...state, pipeline: { ...state.pipeline!, steps: [] } })).toEqual([{ type: 'SucceedRun' }]);
  });
});

describe('a loss-spike restart', () => {
  it('starts the next attempt only once the operator approved, from the proposed checkpoint, skipping the data', () => {
    const T = (rank: number) => taskIdFor(RUN, 'pretrain', 1, rank);
    let h: RunEvent[] = [...started(planned(), 'pretrain'), saved('pretrain', 50)];
    h = [...h, { type: 'ProgressRecorded', data: { run_id: RUN, stage: 'pretrain', attempt: 1, task_id: T(0), seq: 1, step: 90, tokens: 1, elapsed_s: 10 } }];
    h = [
      ...h,
      { type: 'RestartProposed', data: { run_id: RUN, stage: 'pretrain', from_checkpoint_id: CKPT(50), from_step: 50, skip_steps: { from: 80, to: 91 }, reason: 'spike' } },
      { type: 'TasksWithdrawn', data: { run_id: RUN, stage: 'pretrain', attempt: 1, task_ids: [T(0), T(1)], reason: 'spike' } },
    ];
    expect(nextCommands(foldRun(h))).toEqual([]);
    h = [...h, { type: 'RestartApproved', data: { run_id: RUN, confirmation_ref: 'r' } }];
    expect(nextCommands(foldRun(h))).toEqual([
      { type: 'StartStage', stage: 'pretrain', attempt: 2, resume: { from: { checkpoint_id: CKPT(50), uri: 's3://b/pretrain/50', step: 50 }, skip_steps: { from: 80, to: 91 }, recompute_steps: 40, reason: 'restart' } },
    ]);
  });
});
