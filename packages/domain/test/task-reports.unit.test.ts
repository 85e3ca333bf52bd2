import { describe, expect, it } from 'vitest';
import { decideTaskReport, evolveRun, nextCommands, taskIdFor, type RunEvent, type TaskReport } from '@ito/domain';
import { NODES, RUN, exampleManifest, fold, pipelineFor, planned, refusal, started } from './support/run-history.js';

const T0 = taskIdFor(RUN, 'pretrain', 1, 0);
const T1 = taskIdFor(RUN, 'pretrain', 1, 1);
const PREFIX = `s3://acme-checkpoints/code-8b-cpt/${RUN}/`;

function progress(seq: number, step: number, o: { loss?: number; elapsed_s?: number; task?: string; node?: string; attempt?: number } = {}): TaskReport {
  return {
    type: 'progress',
    task_id: o.task ?? T0,
    node_id: o.node ?? NODES[0]!,
    body: { attempt: o.attempt ?? 1, seq, step, tokens: step * 4_194_304, elapsed_s: o.elapsed_s ?? step * 25, ...(o.loss !== undefined ? { loss: o.loss } : {}) },
  };
}

/** Applies a report and returns the history with its events. */
function apply(history: RunEvent[], report: TaskReport): RunEvent[] {
  return [...history, ...decideTaskReport(fold(history), report).events];
}

describe('task reports', () => {
  const running = () => started(planned(), 'pretrain');

  it('records rank 0`s progress and keeps followers` progress out of the ledger', () => {
    const d = decideTaskReport(fold(running()), progress(1, 10, { loss: 3 }));
    expect(d.events.map((e) => e.type)).toEqual(['ProgressRecorded']);
    expect(d).toMatchObject({ duplicate: false, directive: 'continue' });
    expect(decideTaskReport(fold(running()), progress(1, 10, { task: T1, node: NODES[1] })).events).toEqual([]);
  });

  it('acknowledges a repeated sequence number without recording it again', () => {
    const h = apply(running(), progress(1, 10));
    const again = decideTaskReport(fold(h), progress(1, 10));
    expect(again).toEqual({ events: [], duplicate: true, directive: 'continue' });
  });

  it('fences off a report of another attempt, another node, or an unknown task', () => {
    const h = running();
    expect(refusal(() => decideTaskReport(fold(h), progress(1, 10, { attempt: 2 }))).code).toBe('invalid_state');
    expect(refusal(() => decideTaskReport(fold(h), progress(1, 10, { node: NODES[1] }))).code).toBe('invalid_state');
    expect(refusal(() => decideTaskReport(fold(h), progress(1, 10, { task: taskIdFor(RUN, 'pretrain', 2, 0) }))).details).toEqual({ directive: 'stop' });
  });

  it('refuses a checkpoint outside the run`s own storage prefix, so cleanup can never delete anything else', () => {
    const ckpt = (uri: string): TaskReport => ({ type: 'checkpoint', task_id: T0, node_id: NODES[0]!, checkpoint_id: `ckpt_${'7'.repeat(32)}`, body: { attempt: 1, seq: 1, step: 5, uri, bytes: 1, save_seconds: 1, async: true } });
    for (const uri of ['file:///etc/passwd', `${PREFIX}../other/x`, `s3://acme-checkpoints/code-8b-cpt/run_${'9'.repeat(32)}/x`, `${PREFIX}a/./b`, PREFIX]) {
      expect(refusal(() => decideTaskReport(fold(running()), ckpt(uri))).code, uri).toBe('validation_failed');
    }
    expect(decideTaskReport(fold(running()), ckpt(`${PREFIX}pretrain/step-5`)).events.map((e) => e.type)).toEqual(['CheckpointSaved']);
  });

  it('completes the stage when the last task completes, not before', () => {
    const complete = (task: string, node: string, seq: number): TaskReport => ({ type: 'complete', task_id: task, node_id: node, body: { attempt: 1, seq, step: 100, elapsed_s: 2500 } });
    const h = apply(running(), complete(T1, NODES[1]!, 1));
    expect(h.at(-1)!.type).toBe('TaskCompleted');
    const d = decideTaskReport(fold(h), complete(T0, NODES[0]!, 1));
    expect(d.events.map((e) => e.type)).toEqual(['TaskCompleted', 'StageCompleted']);
    expect(d.directive).toBe('stop');
  });

  it('compares an evaluation with the gate: passed, or gate_failed with every failed bound, which nothing overrides', () => {
    const h = started([...running(), { type: 'StageCompleted', data: { run_id: RUN, stage: 'pretrain', attempt: 1 } }], 'eval_pretrain');
    const t = taskIdFor(RUN, 'eval_pretrain', 1, 0);
    const report = (heldout_loss: number): TaskReport => ({ type: 'complete', task_id: t, node_id: NODES[0]!, body: { attempt: 1, seq: 1, elapsed_s: 60, metrics: { heldout_loss } } });
    expect(decideTaskReport(fold(h), report(2.0)).events.map((e) => e.type)).toEqual(['TaskCompleted', 'StageCompleted', 'EvalGatePassed']);
    const failed = apply(h, report(2.4));
    expect(failed.at(-1)).toEqual({ type: 'EvalGateFailed', data: { run_id: RUN, stage: 'pretrain', metrics: { heldout_loss: 2.4 }, failed: ['heldout_loss 2.4 > max 2.1'] } });
    expect(fold(failed).status).toBe('gate_failed');
    expect(nextCommands(fold(failed))).toEqual([]);
  });

  it('fails the attempt when a task fails, withdrawing its other tasks', () => {
    const d = decideTaskReport(fold(running()), { type: 'fail', task_id: T1, node_id: NODES[1]!, body: { attempt: 1, seq: 1, kind: 'crash', reason: 'trainer exited 1', step: 30 } });
    expect(d.events.map((e) => e.type)).toEqual(['TaskFailed', 'TasksWithdrawn', 'StageFailed']);
    expect((d.events[1] as Extract<RunEvent, { type: 'TasksWithdrawn' }>).data.task_ids).toEqual([T0]);
  });

  it('a loss spike proposes a restart from the last checkpoint before it, skipping the spiking data, and waits for an operator', () => {
    let h = running();
    h = [...h, { type: 'CheckpointSaved', data: { run_id: RUN, checkpoint_id: `ckpt_${'8'.repeat(32)}`, step: 50, uri: `${PREFIX}pretrain/step-50`, bytes: 1, save_seconds: 1, stage: 'pretrain', attempt: 1 } }];
    let seq = 1;
    for (const step of [10, 20, 30, 40, 60, 70]) h = apply(h, progress(seq++, step, { loss: 2 }));
    expect(fold(h).status).toBe('training');
    for (const step of [80, 90]) h = apply(h, progress(seq++, step, { loss: 8 }));
    const d = decideTaskReport(fold(h), progress(seq++, 100, { loss: 8 }));
    expect(d.events.map((e) => e.type)).toEqual(['ProgressRecorded', 'LossSpikeDetected', 'RestartProposed', 'TasksWithdrawn']);
    expect(d.events[2]!.data).toMatchObject({ from_checkpoint_id: `ckpt_${'8'.repeat(32)}`, from_step: 50, skip_steps: { from: 80, to: 101 } });
    expect(d.directive).toBe('stop');
    const after = [...h, ...d.events];
    expect(fold(after).status).toBe('awaiting_operator');
    expect(nextCommands(fold(after))).toEqual([]);
    // Only the operator's approval resumes it, from the proposed checkpoint, skipping the data.
    const approved = [...after, { type: 'RestartApproved', data: { run_id: RUN, confirmation_ref: 'r' } } as RunEvent];
    expect(nextCommands(fold(approved))).toEqual([
      { type: 'StartStage', stage: 'pretrain', attempt: 2, resume: { from: { checkpoint_id: `ckpt_${'8'.repeat(32)}`, uri: `${PREFIX}pretrain/step-50`, step: 50 }, skip_steps: { from: 80, to: 101 }, recompute_steps: 50, reason: 'restart' } },
    ]);
  });

  it('reaching the budget ceiling asks rank 0 for a final checkpoint and the others to stop, then fails the run with BudgetExhausted', () => {
    // 2 nodes × 8 GPUs × $2.50/GPU-h = $40 per hour of node time; a $100 ceiling is spent after 2.5 h.
    const m = exampleManifest((x) => (x.budget.ceiling_usd = 100));
    let h = started(planned(pipelineFor(m)), 'pretrain');
    h = apply(h, progress(1, 10, { elapsed_s: 8000 }));
    expect(fold(h).stopRequested).toBeNull();
    const d = decideTaskReport(fold(h), progress(2, 20, { elapsed_s: 9000 }));
    expect(d.events.map((e) => e.type)).toEqual(['ProgressRecorded', 'StopRequested']);
    expect(d.events[1]!.data).toMatchObject({ spent_usd: 100, ceiling_usd: 100 });
    expect(d.directive).toBe('checkpoint_and_stop');
    h = [...h, ...d.events];
    expect(decideTaskReport(fold(h), progress(1, 20, { task: T1, node: NODES[1] })).directive).toBe('stop');
    h = apply(h, { type: 'checkpoint', task_id: T0, node_id: NODES[0]!, checkpoint_id: `ckpt_${'f'.repeat(32)}`, body: { attempt: 1, seq: 3, step: 21, uri: `${PREFIX}pretrain/step-21`, bytes: 1, save_seconds: 1, async: false, final: true } });
    expect(nextCommands(fold(h))).toEqual([]);
    h = apply(h, { type: 'fail', task_id: T0, node_id: NODES[0]!, body: { attempt: 1, seq: 4, kind: 'stopped', reason: 'asked to checkpoint and stop' } });
    h = apply(h, { type: 'fail', task_id: T1, node_id: NODES[1]!, body: { attempt: 1, seq: 1, kind: 'stopped', reason: 'asked to stop' } });
    expect(h.slice(-2).map((e) => e.type)).toEqual(['TaskStopped', 'TaskStopped']);
    expect(nextCommands(fold(h))).toEqual([{ type: 'FinishBudgetStop' }]);
  });

  it("charges node time by the control plane's clock: a trainer that under-reports its elapsed time still reaches the ceiling", () => {
    // $40 per hour of node time (as above): a $100 ceiling is spent 2.5 h after the tasks were assigned.
    const m = exampleManifest((x) => (x.budget.ceiling_usd = 100));
    const assigned = Date.parse('2026-11-02T00:00:00Z');
    const at = (s: number) => new Date(assigned + s * 1000);
    const h = started(planned(pipelineFor(m)), 'pretrain').map((e) => (e.type === 'StageStarted' ? ({ ...e, data: { ...e.data, started_at: at(0).toISOString() } } as RunEvent) : e));
    // The trainer claims 1 s each time; the API received the reports 1 h, then 2.5 h after assignment.
    const early = decideTaskReport(fold(h), progress(1, 10, { elapsed_s: 1 }), at(3600));
    expect(early.events.map((e) => e.type)).toEqual(['ProgressRecorded']);
    expect(early.events[0]!.data).toMatchObject({ elapsed_s: 1, received_at: at(3600).toISOString() });
    expect(fold([...h, ...early.events]).spentUsd).toBeCloseTo(40, 9);
    const late = decideTaskReport(fold([...h, ...early.events]), progress(2, 20, { elapsed_s: 2 }), at(9000));
    expect(late.events.map((e) => e.type)).toEqual(['ProgressRecorded', 'StopRequested']);
    expect(late.events[1]!.data).toMatchObject({ spent_usd: 100, ceiling_usd: 100 });
    // A claim above the wall clock (a time-scaled simulation's) is charged as claimed: the clock is the floor.
    const claimed = decideTaskReport(fold(h), progress(1, 10, { elapsed_s: 9000 }), at(60));
    expect(claimed.events.map((e) => e.type)).toEqual(['ProgressRecorded', 'StopRequested']);
  });

  it('after withdrawal a task may only say it stopped, once', () => {
    const h = [...running(), { type: 'CancelRequested', data: { run_id: RUN, confirmation_ref: 'c' } } as RunEvent];
    const cancelled: RunEvent[] = [...h, { type: 'TasksWithdrawn', data: { run_id: RUN, stage: 'pretrain', attempt: 1, task_ids: [T0, T1], reason: 'run cancelled' } }];
    expect(refusal(() => decideTaskReport(fold(cancelled), progress(1, 10))).code).toBe('invalid_state');
    const stop: TaskReport = { type: 'fail', task_id: T0, node_id: NODES[0]!, body: { attempt: 1, seq: 1, kind: 'stopped', reason: 'withdrawn' } };
    const acked = apply(cancelled, stop);
    expect(acked.at(-1)!.type).toBe('TaskStopped');
    expect(decideTaskReport(fold(acked), stop).duplicate).toBe(true);
    expect(refusal(() => decideTaskReport(fold(acked), { ...stop, body: { ...stop.body, seq: 2 } })).code).toBe('invalid_state');
  });

  it('folds node time into the run`s spend at the booking rate', () => {
    const h = apply(running(), progress(1, 10, { elapsed_s: 3600 }));
    expect(fold(h).spentUsd).toBeCloseTo(40, 6);
    const next = evolveRun(fold(h), { type: 'StageCompleted', data: { run_id: RUN, stage: 'pretrain', attempt: 1 } });
    expect(next.accruedUsd).toBeCloseTo(40, 6);
  });
});

describe('a stop the control plane asked for', () => {
  it('is acknowledged as TaskStopped while the run is cancelling; a stop nobody asked for hands the task back', () => {
    const h = started(planned(), 'pretrain');
    const stop: TaskReport = { type: 'fail', task_id: T0, node_id: NODES[0]!, body: { attempt: 1, seq: 1, kind: 'stopped', reason: 'asked to stop' } };
    const cancelling = [...h, { type: 'CancelRequested', data: { run_id: RUN, confirmation_ref: 'c' } } as RunEvent];
    expect(decideTaskReport(fold(cancelling), stop).events.map((e) => e.type)).toEqual(['TaskStopped']);
    expect(decideTaskReport(fold(h), stop).events.map((e) => e.type)).toEqual(['TaskFailed', 'TasksWithdrawn', 'StageFailed']);
  });
});
