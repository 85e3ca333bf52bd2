import { describe, expect, it } from 'vitest';
import { decideTaskReport, directiveFor, taskIdFor, type RunAggregate, type RunEvent, type TaskReport } from '@ito/domain';
import { NODES, RUN, exampleManifest, fold, pipelineFor, planned, refusal, started } from './support/run-history.js';

/**
 * The rules of task reports one at a time: what each directive is in each run status, who may still report after
 * a withdrawal or the end of a run, restores, what a failure withdraws, where a loss-spike restart starts, and the
 * ladder's verdict. Each expectation is a behaviour an agent or an auditor relies on.
 */
const T0 = taskIdFor(RUN, 'pretrain', 1, 0);
const T1 = taskIdFor(RUN, 'pretrain', 1, 1);
const PREFIX = `s3://acme-checkpoints/code-8b-cpt/${RUN}/`;
const CKPT = (n: number) => `ckpt_${String(n).padStart(32, '0')}`;
const running = () => started(planned(), 'pretrain');

function progress(task: string, node: string, seq: number, step: number, loss?: number): TaskReport {
  return { type: 'progress', task_id: task, node_id: node, body: { attempt: 1, seq, step, tokens: step, elapsed_s: step, ...(loss !== undefined ? { loss } : {}) } };
}
const p0 = (seq: number, step: number, loss?: number) => progress(T0, NODES[0]!, seq, step, loss);
const fail = (task: string, node: string, kind: 'crash' | 'stopped', extra: { step?: number; elapsed_s?: number } = {}): TaskReport => ({
  type: 'fail',
  task_id: task,
  node_id: node,
  body: { attempt: 1, seq: 9, kind, reason: kind === 'crash' ? 'segfault' : 'asked to stop', ...extra },
});
const apply = (h: RunEvent[], r: TaskReport) => [...h, ...decideTaskReport(fold(h), r).events];
const saved = (stage: string, step: number, o: { attempt?: number; final?: boolean } = {}): RunEvent => ({
  type: 'CheckpointSaved',
  data: { run_id: RUN, checkpoint_id: CKPT(step), step, uri: `${PREFIX}${stage}/step-${step}`, bytes: 1, save_seconds: 1, stage, attempt: o.attempt ?? 1, ...(o.final ? { final: true } : {}) },
});
const STOP: RunEvent = { type: 'StopRequested', data: { run_id: RUN, reason: 'budget_exhausted', spent_usd: 100, ceiling_usd: 100 } };

describe('the directive for a task', () => {
  it('is stop for every run status after which no task may go on, and while cancelling or waiting for an operator', () => {
    const state = fold(running());
    expect(directiveFor(state, T0)).toBe('continue');
    for (const status of ['succeeded', 'failed', 'cancelled', 'gate_failed', 'cleaning_up', 'cleaned', 'cancelling', 'awaiting_operator'] as const) {
      expect(directiveFor({ ...state, status } as RunAggregate, T0), status).toBe('stop');
    }
    for (const status of ['training', 'recovering'] as const) expect(directiveFor({ ...state, status } as RunAggregate, T0), status).toBe('continue');
  });

  it('is stop for a task withdrawn while the run goes on (its sibling failed and the run is recovering)', () => {
    const h = apply(apply(running(), p0(1, 5)), fail(T1, NODES[1]!, 'crash'));
    expect(fold(h).status).toBe('recovering');
    expect(directiveFor(fold(h), T0)).toBe('stop');
  });

  it('asks rank 0 for a final checkpoint on a budget stop until this attempt saved one; any other checkpoint does not count', () => {
    let h: RunEvent[] = [...running(), saved('pretrain', 10), saved('data_prep', 11, { final: true }), STOP];
    expect(directiveFor(fold(h), T0)).toBe('checkpoint_and_stop');
    expect(directiveFor(fold(h), T1)).toBe('stop');
    // A final checkpoint of an earlier attempt of the same stage is not this attempt's.
    h = [...running(), saved('pretrain', 12, { attempt: 0, final: true }), STOP];
    expect(directiveFor(fold(h), T0)).toBe('checkpoint_and_stop');
    h = [...h, saved('pretrain', 13, { final: true })];
    expect(directiveFor(fold(h), T0)).toBe('stop');
  });
});

describe('how far progress may go', () => {
  const total = () => fold(running()).current!.total_steps!;
  const restarted = (h: RunEvent[]) => [...h, { type: 'StageFailed', data: { run_id: RUN, stage: 'pretrain', attempt: 1, reason: 'crash' } } as RunEvent];

  it('refuses a step beyond the stage`s planned steps, recording nothing; the last step itself is fine', () => {
    expect(total()).toBeGreaterThan(1);
    const h = running();
    const beyond = refusal(() => decideTaskReport(fold(h), p0(1, total() + 1)));
    expect(beyond.code).toBe('validation_failed');
    expect(beyond.message).toMatch(new RegExp(`beyond the ${total()} steps of stage pretrain's plan; nothing was recorded`));
    expect(refusal(() => decideTaskReport(fold(h), p0(1, 1_000_000_000))).code).toBe('validation_failed');
    expect(decideTaskReport(fold(h), p0(1, total())).events.map((e) => e.type)).toContain('ProgressRecorded');
  });

  it('refuses a step that goes back within an attempt; the same step again is fine', () => {
    let h = apply(running(), p0(1, 5));
    const back = refusal(() => decideTaskReport(fold(h), p0(2, 4)));
    expect(back).toMatchObject({ code: 'validation_failed', message: 'progress at step 4 goes back from step 5 in attempt 1 of pretrain; nothing was recorded' });
    h = apply(h, p0(2, 5));
    expect(fold(h).current!.last_step).toBe(5);
    // A refusal leaves the sequence number unused: the next report is judged afresh.
    expect(fold(h).current!.tasks.find((t) => t.task_id === T0)!.last_seq).toBe(2);
  });

  it('counts afresh in a new attempt: a restart may report steps below the last attempt`s', () => {
    const h = apply(running(), p0(1, 7));
    const next = started(restarted(h), 'pretrain', 2);
    const t0 = taskIdFor(RUN, 'pretrain', 2, 0);
    const state = fold(next);
    expect(state.current!.last_step).toBeNull();
    const report: TaskReport = { type: 'progress', task_id: t0, node_id: NODES[0]!, body: { attempt: 2, seq: 1, step: 3, tokens: 3, elapsed_s: 3 } };
    expect(decideTaskReport(state, report).events.map((e) => e.type)).toContain('ProgressRecorded');
  });
});

describe('who may still report', () => {
  it('refuses a report about a run it cannot find, naming the task', () => {
    const state = fold(running());
    const err = refusal(() => decideTaskReport({ ...state, pipeline: null } as unknown as RunAggregate, p0(1, 1)));
    expect(err).toMatchObject({ code: 'not_found', message: `task ${T0} not found` });
  });

  it('a withdrawn task may not report progress or a crash, only that it stopped', () => {
    const h = apply(apply(running(), p0(1, 5)), fail(T1, NODES[1]!, 'crash'));
    expect(refusal(() => decideTaskReport(fold(h), p0(2, 6)))).toEqual({ code: 'invalid_state', details: { directive: 'stop' }, message: `task ${T0} is not the current attempt of its stage; stop it` });
    expect(refusal(() => decideTaskReport(fold(h), { ...fail(T0, NODES[0]!, 'crash'), body: { attempt: 1, seq: 3, kind: 'crash', reason: 'x' } })).code).toBe('invalid_state');
    expect(decideTaskReport(fold(h), { ...fail(T0, NODES[0]!, 'stopped'), body: { attempt: 1, seq: 3, kind: 'stopped', reason: 'x' } }).events.map((e) => e.type)).toEqual(['TaskStopped']);
  });

  it('a task of an attempt that already failed may not report progress', () => {
    const h: RunEvent[] = [...running(), { type: 'StageFailed', data: { run_id: RUN, stage: 'pretrain', attempt: 1, reason: 'node lost' } }];
    expect(fold(h).current!.tasks.find((t) => t.task_id === T0)!.status).toBe('assigned');
    expect(refusal(() => decideTaskReport(fold(h), p0(1, 5))).code).toBe('invalid_state');
  });

  it('once the run is over, a task may only acknowledge its stop', () => {
    const h: RunEvent[] = [...running(), { type: 'RunFailed', data: { run_id: RUN, reason: 'x' } }];
    expect(refusal(() => decideTaskReport(fold(h), p0(1, 5))).details).toEqual({ directive: 'stop' });
    expect(decideTaskReport(fold(h), fail(T0, NODES[0]!, 'stopped')).events.map((e) => e.type)).toEqual(['TaskStopped']);
  });

  it('names the storage prefix a checkpoint must be under', () => {
    const r: TaskReport = { type: 'checkpoint', task_id: T0, node_id: NODES[0]!, checkpoint_id: CKPT(1), body: { attempt: 1, seq: 1, step: 5, uri: 's3://elsewhere/x', bytes: 1, save_seconds: 1, async: true } };
    const err = (() => {
      try {
        decideTaskReport(fold(running()), r);
      } catch (e) {
        return e as Error;
      }
      throw new Error('expected a refusal');
    })();
    expect(err.message).toBe(`a checkpoint of run ${RUN} must be stored under ${PREFIX}`);
  });
});

describe('checkpoints', () => {
  const report = (o: { final?: boolean; simulated?: boolean }): TaskReport => ({
    type: 'checkpoint',
    task_id: T0,
    node_id: NODES[0]!,
    checkpoint_id: CKPT(5),
    body: { attempt: 1, seq: 1, step: 5, uri: `${PREFIX}pretrain/step-5`, bytes: 1, save_seconds: 1, async: true, ...o },
  });

  it('are marked final and simulated exactly when the agent said so', () => {
    const marked = decideTaskReport(fold(running()), report({ final: true, simulated: true })).events[0]!.data;
    expect(marked).toMatchObject({ final: true, simulated: true });
    const plain = decideTaskReport(fold(running()), report({ final: false, simulated: false })).events[0]!.data;
    expect(plain).not.toHaveProperty('final');
    expect(plain).not.toHaveProperty('simulated');
  });
});

describe('restores of a resumed attempt', () => {
  const R0 = taskIdFor(RUN, 'pretrain', 2, 0);
  const from = { checkpoint_id: CKPT(40), uri: `${PREFIX}pretrain/step-40`, step: 40 };
  const resumed = () => {
    const h: RunEvent[] = [...running(), saved('pretrain', 40), { type: 'StageFailed', data: { run_id: RUN, stage: 'pretrain', attempt: 1, reason: 'crash' } }];
    return started(h, 'pretrain', 2, { from, skip_steps: null, recompute_steps: 0, reason: 'retry' });
  };
  const restored = (o: { checkpoint_id?: string; step?: number; seq?: number } = {}): TaskReport => ({
    type: 'restored',
    task_id: R0,
    node_id: NODES[0]!,
    body: { attempt: 2, seq: o.seq ?? 1, checkpoint_id: o.checkpoint_id ?? from.checkpoint_id, step: o.step ?? 40, bytes: 1000, restore_seconds: 12 },
  });

  it('record the checkpoint the attempt was told to resume from, once per task', () => {
    const d = decideTaskReport(fold(resumed()), restored());
    expect(d.events).toEqual([
      { type: 'CheckpointRestored', data: { run_id: RUN, task_id: R0, stage: 'pretrain', attempt: 2, checkpoint_id: from.checkpoint_id, step: 40, bytes: 1000, restore_seconds: 12, seq: 1 } },
    ]);
    const again = decideTaskReport(fold([...resumed(), ...d.events]), restored({ seq: 2 }));
    expect(again).toEqual({ events: [], duplicate: true, directive: 'continue' });
  });

  it('refuse another checkpoint, another step, or a restore in an attempt that resumes from nothing', () => {
    const told = `attempt 2 of pretrain resumes from checkpoint ${from.checkpoint_id} at step 40`;
    expect(refusal(() => decideTaskReport(fold(resumed()), restored({ checkpoint_id: CKPT(41) })))).toMatchObject({ code: 'validation_failed', message: told });
    expect(refusal(() => decideTaskReport(fold(resumed()), restored({ step: 41 })))).toMatchObject({ code: 'validation_failed', message: told });
    const fresh: TaskReport = { type: 'restored', task_id: T0, node_id: NODES[0]!, body: { attempt: 1, seq: 1, checkpoint_id: CKPT(40), step: 40, bytes: 1, restore_seconds: 1 } };
    expect(refusal(() => decideTaskReport(fold(running()), fresh))).toMatchObject({ code: 'validation_failed', message: 'attempt 1 of pretrain resumes from no checkpoint' });
  });
});

describe('failures and stops', () => {
  it('a crash while the run is cancelling is still a crash, not an acknowledged stop', () => {
    const h: RunEvent[] = [...running(), { type: 'CancelRequested', data: { run_id: RUN, confirmation_ref: 'c' } }];
    const d = decideTaskReport(fold(h), fail(T0, NODES[0]!, 'crash'));
    expect(d.events[0]).toMatchObject({ type: 'TaskFailed', data: { failure: 'crash' } });
  });

  it('an acknowledged stop carries its step and elapsed time exactly when sent', () => {
    const h: RunEvent[] = [...running(), { type: 'CancelRequested', data: { run_id: RUN, confirmation_ref: 'c' } }];
    const full = decideTaskReport(fold(h), fail(T0, NODES[0]!, 'stopped', { step: 7, elapsed_s: 8 })).events[0]!;
    expect(full).toMatchObject({ type: 'TaskStopped', data: { step: 7, elapsed_s: 8 } });
    const bare = decideTaskReport(fold(h), fail(T0, NODES[0]!, 'stopped')).events[0]!;
    expect(bare.data).not.toHaveProperty('step');
    expect(bare.data).not.toHaveProperty('elapsed_s');
  });

  it('a crash records when it was detected: the moment the report arrived', () => {
    const now = new Date('2026-12-04T10:00:00.000Z');
    expect(decideTaskReport(fold(running()), fail(T1, NODES[1]!, 'crash'), now).events[0]!.data).toMatchObject({ detected_at: '2026-12-04T10:00:00.000Z' });
    expect(decideTaskReport(fold(running()), fail(T1, NODES[1]!, 'crash')).events[0]!.data).not.toHaveProperty('detected_at');
  });

  it('withdraws the running and assigned siblings of a failed task, naming it', () => {
    const h = apply(running(), p0(1, 5));
    const d = decideTaskReport(fold(h), fail(T1, NODES[1]!, 'crash'));
    expect(d.events.map((e) => e.type)).toEqual(['TaskFailed', 'TasksWithdrawn', 'StageFailed']);
    expect(d.events[1]!.data).toEqual({ run_id: RUN, stage: 'pretrain', attempt: 1, task_ids: [T0], reason: `task ${T1} failed` });
  });

  it('a failing single-task stage withdraws nobody', () => {
    const h = [...running(), { type: 'StageCompleted', data: { run_id: RUN, stage: 'pretrain', attempt: 1 } } as RunEvent];
    const e = started(h, 'eval_pretrain');
    const E0 = taskIdFor(RUN, 'eval_pretrain', 1, 0);
    const d = decideTaskReport(fold(e), { type: 'fail', task_id: E0, node_id: NODES[0]!, body: { attempt: 1, seq: 1, kind: 'crash', reason: 'oom' } });
    expect(d.events.map((x) => x.type)).toEqual(['TaskFailed', 'StageFailed']);
  });

  it('during a budget stop a crash fails only its task: the stop is already ending the attempt', () => {
    const h: RunEvent[] = [...running(), STOP];
    expect(decideTaskReport(fold(h), fail(T1, NODES[1]!, 'crash')).events.map((e) => e.type)).toEqual(['TaskFailed']);
  });
});

describe('progress', () => {
  it('leaves out of the event what the agent did not send (no keys set to undefined)', () => {
    const d = decideTaskReport(fold(running()), { type: 'progress', task_id: T0, node_id: NODES[0]!, body: { attempt: 1, seq: 1, step: 1, tokens: 1, elapsed_s: 1 } });
    expect(Object.keys(d.events[0]!.data).sort()).toEqual(['attempt', 'elapsed_s', 'run_id', 'seq', 'stage', 'step', 'task_id', 'tokens']);
  });
});

describe('a loss-spike restart', () => {
  /** Loss 2 until step 70, then 8 from step 80: the spike's first step is 80. */
  function spiking(checkpoints: RunEvent[]): ReturnType<typeof decideTaskReport> {
    let h: RunEvent[] = [...running(), ...checkpoints];
    let seq = 1;
    for (const step of [10, 20, 30, 40, 60, 70]) h = apply(h, p0(seq++, step, 2));
    for (const step of [80, 90]) h = apply(h, p0(seq++, step, 8));
    return decideTaskReport(fold(h), p0(seq, 100, 8));
  }

  it('starts from the newest checkpoint of this stage saved before the spike`s first step', () => {
    // 80 already holds the first spiking step's update; 75 is the newest before it; 78 belongs to another stage.
    const d = spiking([saved('pretrain', 30), saved('pretrain', 75), saved('pretrain', 20), saved('pretrain', 80), saved('mid_train', 78)]);
    const proposed = d.events.find((e) => e.type === 'RestartProposed')!;
    expect(proposed.data).toEqual({
      run_id: RUN,
      stage: 'pretrain',
      from_checkpoint_id: CKPT(75),
      from_step: 75,
      skip_steps: { from: 80, to: 101 },
      reason: `loss 8 at step 100 stayed above 2.5 × its moving average 2.0000 for 3 reports; restart from checkpoint ${CKPT(75)} (step 75) skipping steps 80–100`,
    });
    expect(d.events.find((e) => e.type === 'TasksWithdrawn')!.data).toMatchObject({ reason: 'loss spike: waiting for an operator' });
  });

  it('starts the stage over when it saved nothing before the spike', () => {
    const proposed = spiking([saved('pretrain', 85)]).events.find((e) => e.type === 'RestartProposed')!;
    expect(proposed.data).toMatchObject({ from_checkpoint_id: null, from_step: 0 });
    expect((proposed.data as { reason: string }).reason).toContain('restart from the start of the stage skipping steps 80–100');
  });
});

describe('stage completion', () => {
  it('carries the metrics only for evaluation and ladder stages', () => {
    const complete = (task: string, node: string, metrics?: Record<string, number>): TaskReport => ({ type: 'complete', task_id: task, node_id: node, body: { attempt: 1, seq: 1, elapsed_s: 1, ...(metrics ? { metrics } : {}) } });
    const h = apply(running(), complete(T1, NODES[1]!));
    const d = decideTaskReport(fold(h), complete(T0, NODES[0]!, { loss: 1.5 }));
    expect(d.events[0]!.data).toMatchObject({ metrics: { loss: 1.5 } });
    expect(d.events[1]).toEqual({ type: 'StageCompleted', data: { run_id: RUN, stage: 'pretrain', attempt: 1 } });
    const e = started([...h, ...d.events], 'eval_pretrain');
    const E0 = taskIdFor(RUN, 'eval_pretrain', 1, 0);
    const ev = decideTaskReport(fold(e), complete(E0, NODES[0]!, { mmlu: 0.9, humaneval: 0.9 }));
    expect(ev.events[1]).toEqual({ type: 'StageCompleted', data: { run_id: RUN, stage: 'eval_pretrain', attempt: 1, metrics: { mmlu: 0.9, humaneval: 0.9 } } });
  });
});

describe('the 150M ladder', () => {
  const m = exampleManifest((x) => (x.data[1]!.origin = 'custom'));
  const L = (stage: 'ladder_custom' | 'ladder_reference', rank: number) => taskIdFor(RUN, stage, 1, rank);
  function ladder(customLoss: number, referenceLoss: number): ReturnType<typeof decideTaskReport> {
    let h = started(planned(pipelineFor(m)), 'ladder_custom');
    const done = (stage: 'ladder_custom' | 'ladder_reference', rank: number, loss: number): TaskReport => ({
      type: 'complete',
      task_id: L(stage, rank),
      node_id: NODES[rank]!,
      body: { attempt: 1, seq: 1, elapsed_s: 1, metrics: { proxy_eval_loss: loss } },
    });
    h = apply(apply(h, done('ladder_custom', 1, customLoss)), done('ladder_custom', 0, customLoss));
    h = started(h, 'ladder_reference');
    h = apply(h, done('ladder_reference', 1, referenceLoss));
    return decideTaskReport(fold(h), done('ladder_reference', 0, referenceLoss));
  }

  it('records both figures, the custom data refs and the verdict after the reference proxy; a pass goes on', () => {
    const d = ladder(3.0, 3.0);
    expect(d.events.map((e) => e.type)).toEqual(['TaskCompleted', 'StageCompleted', 'LadderDecision']);
    expect(d.events[2]!.data).toMatchObject({ custom_loss: 3, reference_loss: 3, passed: true, tolerance: 0.02, custom_refs: [1] });
  });

  it('a failing custom mix fails the run as a data-policy violation', () => {
    const d = ladder(3.5, 3.0);
    expect(d.events.map((e) => e.type)).toEqual(['TaskCompleted', 'StageCompleted', 'LadderDecision', 'RunFailed']);
    expect(d.events[3]!.data).toMatchObject({ code: 'data_policy_violation' });
  });
});
