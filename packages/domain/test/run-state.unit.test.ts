import { describe, expect, it } from 'vitest';
import { chargedSeconds, evolveRun, foldRun, initialRunState, normalizeRunAggregate, stateForStage, type RunAggregate, type RunEvent, type StageAttempt } from '@ito/domain';
import { NODES, RUN, pipelineFor, planned, reserved } from './support/run-history.js';

/**
 * The run aggregate's fold (run-state.ts), judged by what it gives back: the public state, the current attempt, the
 * cost so far and the facts the deciders read. Histories are written event by event, as the ledger would hold them.
 */

const [A, B] = NODES as [string, string];
const T = (attempt: number, rank: number) => `task_${attempt}_${rank}`;
const CKPT = (n: number) => `ckpt_${String(n).padStart(32, '0')}`;
const AT = (s: number) => new Date(Date.UTC(2026, 11, 1, 0, 0, s)).toISOString();

function stageStarted(stage: string, attempt = 1, o: { nodes?: string[]; started_at?: string } = {}): RunEvent {
  const nodes = o.nodes ?? [A, B];
  return {
    type: 'StageStarted',
    data: {
      run_id: RUN,
      stage,
      attempt,
      tasks: nodes.map((node_id, rank) => ({ task_id: T(attempt, rank), node_id, rank, role: 'trainer' as const })),
      ...(o.started_at !== undefined ? { started_at: o.started_at } : {}),
    },
  };
}
const progress = (task: string, step: number, o: { elapsed_s?: number; received_at?: string; seq?: number; stage?: string } = {}): RunEvent => ({
  type: 'ProgressRecorded',
  data: { run_id: RUN, stage: o.stage ?? 'pretrain', step, tokens: step * 10, task_id: task, ...(o.seq !== undefined ? { seq: o.seq } : {}), ...(o.elapsed_s !== undefined ? { elapsed_s: o.elapsed_s } : {}), ...(o.received_at !== undefined ? { received_at: o.received_at } : {}) },
});
const taskFailed = (task: string, node: string, failure: 'crash' | 'gpu_fault', detected_at?: string): RunEvent => ({
  type: 'TaskFailed',
  data: { run_id: RUN, task_id: task, stage: 'pretrain', attempt: 1, node_id: node, seq: 5, failure, reason: 'boom', ...(detected_at ? { detected_at } : {}) },
});
const stageFailed = (stage: string, attempt: number, reason = 'a task failed'): RunEvent => ({ type: 'StageFailed', data: { run_id: RUN, stage, attempt, reason } });
const nodeLost = (node: string, o: { detected_at?: string; task_id?: string } = {}): RunEvent => ({
  type: 'NodeLost',
  data: { run_id: RUN, node_id: node, last_heartbeat_at: AT(1), ...o },
});
const taskHung = (node: string, task: string, detected_at?: string): RunEvent => ({
  type: 'TaskHung',
  data: { run_id: RUN, node_id: node, task_id: task, stage: 'pretrain', attempt: 1, last_progress_at: AT(2), last_heartbeat_at: AT(3), expected_step_s: 1, k: 10, ...(detected_at ? { detected_at } : {}) },
});
const saved = (n: number, o: Partial<Extract<RunEvent, { type: 'CheckpointSaved' }>['data']> = {}): RunEvent => ({
  type: 'CheckpointSaved',
  data: { run_id: RUN, checkpoint_id: CKPT(n), step: n, uri: `s3://b/${RUN}/step-${n}`, bytes: 100, save_seconds: 1, ...o },
});
const cancelled: RunEvent[] = [
  { type: 'CancelRequested', data: { run_id: RUN, confirmation_ref: 'cfm_1' } },
  { type: 'RunCancelled', data: { run_id: RUN, reason: 'cancelled' } },
];
const cleanupStarted = (to_remove: string[] = [], release_booking = false): RunEvent => ({ type: 'CleanupStarted', data: { run_id: RUN, confirmation_ref: 'cfm_2', to_remove, release_booking } });

const training = (): RunEvent[] => [...planned(), stageStarted('pretrain')];
const current = (s: RunAggregate): StageAttempt => {
  if (!s.current) throw new Error('no current attempt');
  return s.current;
};

describe('the public state each stage puts a run in', () => {
  it('names one state per kind of stage', () => {
    expect(stateForStage('data_prep')).toBe('preparing_data');
    expect(stateForStage('ladder_custom')).toBe('preparing_data');
    expect(stateForStage('planning')).toBe('planning');
    expect(stateForStage('eval_pretrain')).toBe('evaluating');
    for (const stage of ['sft', 'dpo', 'rlvr', 'post_training']) expect(stateForStage(stage)).toBe('post_training');
    for (const stage of ['pretrain', 'mid_train', 'long_context', 'my_ladder_', 'pre_eval']) expect(stateForStage(stage)).toBe('training');
  });

  it('a fresh aggregate has no state, no facts and empty lists', () => {
    const s = foldRun([]);
    expect(s).toEqual(initialRunState());
    expect(s.status).toBe('none');
    expect(s.completedStages).toEqual([]);
    expect(s.checkpoints).toEqual([]);
    expect(s.excludedNodes).toEqual([]);
    expect(s.suspectNodes).toEqual([]);
    expect(s.attempts).toEqual({});
    expect(s.ladderLosses).toEqual({});
  });

  it('reserved, confirmed, then each stage moves the state; a completed stage is listed once per completion', () => {
    expect(foldRun(reserved().slice(0, 1)).status).toBe('reserved');
    expect(foldRun(reserved().slice(0, 2)).status).toBe('confirmed');
    const s = foldRun(training());
    expect(s.status).toBe('training');
    expect(s.stage).toBe('pretrain');
    expect(s.completedStages).toEqual(['data_prep', 'planning']);
    expect(s.attempts).toEqual({ data_prep: 1, planning: 1, pretrain: 1 });
    expect(s.version).toBe(training().length);
  });

  it('a stage starting on an aggregate with no run (a stream out of order) leaves it without a state', () => {
    expect(foldRun([stageStarted('pretrain')]).status).toBe('none');
  });
});

describe('ended runs stay ended', () => {
  it('a stage started, failed or resumed after a cancel request leaves the run cancelling', () => {
    const base = [...training(), cancelled[0]!];
    expect(foldRun([...base, stageStarted('pretrain', 2)]).status).toBe('cancelling');
    expect(foldRun([...base, stageFailed('pretrain', 1)]).status).toBe('cancelling');
    expect(foldRun([...base, nodeLost(A)]).status).toBe('cancelling');
    expect(foldRun([...base, { type: 'RunResumed', data: { run_id: RUN, from_checkpoint_id: null } }]).status).toBe('cancelling');
  });

  it('a late failure of a terminal run, or during cleanup, changes nothing public', () => {
    for (const end of [[...cancelled], [{ type: 'RunSucceeded', data: { run_id: RUN } } as RunEvent], [...cancelled, cleanupStarted()], [...cancelled, cleanupStarted(), { type: 'CleanupCompleted', data: { run_id: RUN, removed: [], booking_released: false } } as RunEvent]]) {
      const before = foldRun([...training(), ...end]);
      const after = foldRun([...training(), ...end, stageFailed('pretrain', 1), stageStarted('pretrain', 2)]);
      expect(after.status).toBe(before.status);
      // A stage failing after the end records no state to resume to.
      expect(foldRun([...training(), ...end, stageFailed('pretrain', 1)]).resumeTo).toBe(before.resumeTo);
    }
  });

  it('a stage failing while running sends the run to recovery, to resume in the state of that stage', () => {
    const s = foldRun([...planned(), stageStarted('sft'), stageFailed('sft', 1)]);
    expect(s.status).toBe('recovering');
    expect(s.resumeTo).toBe('post_training');
    expect(current(s).status).toBe('failed');
    expect(current(s).failure_reason).toBe('a task failed');
  });

  it('the failure of an older attempt leaves the current one without a reason', () => {
    const s = foldRun([...training(), stageFailed('pretrain', 2, 'old'), stageFailed('data_prep', 1, 'other stage')]);
    expect(current(s).failure_reason).toBeUndefined();
  });

  it('RunFailed keeps its reason and code; without a code, none is invented', () => {
    const withCode = foldRun([...training(), { type: 'RunFailed', data: { run_id: RUN, reason: 'no node left', code: 'capacity_insufficient' } }]);
    expect(withCode).toMatchObject({ status: 'failed', terminal: 'failed' });
    expect(withCode.failure).toStrictEqual({ reason: 'no node left', code: 'capacity_insufficient' });
    expect(foldRun([...training(), { type: 'RunFailed', data: { run_id: RUN, reason: 'r' } }]).failure).toStrictEqual({ reason: 'r' });
  });

  it('an exhausted budget fails the run as budget_exceeded, unless a failure was recorded first', () => {
    const exhausted: RunEvent = { type: 'BudgetExhausted', data: { run_id: RUN, spent_usd: 10, ceiling_usd: 9 } };
    const s = foldRun([...training(), exhausted]);
    expect(s).toMatchObject({ status: 'failed', terminal: 'failed' });
    expect(s.failure).toStrictEqual({ reason: 'budget exhausted', code: 'budget_exceeded' });
    const first = foldRun([...training(), { type: 'RunFailed', data: { run_id: RUN, reason: 'first' } }, exhausted]);
    expect(first.failure).toStrictEqual({ reason: 'first' });
  });
});

describe('cleanup', () => {
  it('remembers the state the run ended in, what it removes and whether the booking goes too', () => {
    const started = foldRun([...training(), ...cancelled, cleanupStarted(['s3://b/x'], true)]);
    expect(started).toMatchObject({ status: 'cleaning_up', terminal: 'cancelled', cleanup: { to_remove: ['s3://b/x'], done: false, release_booking: true } });
    const done = foldRun([...training(), ...cancelled, cleanupStarted(['s3://b/x'], true), { type: 'CleanupCompleted', data: { run_id: RUN, removed: [], booking_released: false } }]);
    expect(done).toMatchObject({ status: 'cleaned', terminal: 'cancelled', cleanup: { to_remove: ['s3://b/x'], done: true, release_booking: false } });
  });

  it('a second cleanup start keeps the state the run ended in, not the cleaned state', () => {
    const twice = foldRun([...training(), ...cancelled, cleanupStarted(), { type: 'CleanupCompleted', data: { run_id: RUN, removed: [], booking_released: false } }, cleanupStarted()]);
    expect(twice.terminal).toBe('cancelled');
  });

  it('a run that never ended has no terminal state to remember; one read back without the field takes its status', () => {
    expect(foldRun([...training(), cleanupStarted()]).terminal).toBeNull();
    const stored = normalizeRunAggregate({ status: 'succeeded', runId: RUN });
    expect(stored.checkpoints).toEqual([]);
    expect(stored.terminal).toBeNull();
    expect(evolveRun(stored, cleanupStarted()).terminal).toBe('succeeded');
  });

  it('a completion recorded without its start removes nothing', () => {
    const s = foldRun([{ type: 'CleanupCompleted', data: { run_id: RUN, removed: [], booking_released: true } }]);
    expect(s.cleanup).toEqual({ to_remove: [], done: true, release_booking: true });
  });
});

describe('checkpoints', () => {
  it('records what was saved, with stage, attempt, final and simulated only when said', () => {
    const s = foldRun([...training(), saved(10), saved(20, { stage: 'pretrain', attempt: 1, final: true, simulated: true })]);
    expect(s.checkpoints[0]).toStrictEqual({ checkpoint_id: CKPT(10), step: 10, uri: `s3://b/${RUN}/step-10`, bytes: 100, save_seconds: 1 });
    expect(s.checkpoints[1]).toStrictEqual({ checkpoint_id: CKPT(20), step: 20, uri: `s3://b/${RUN}/step-20`, bytes: 100, save_seconds: 1, stage: 'pretrain', attempt: 1, final: true, simulated: true });
  });

  it('a deletion removes only its own checkpoint', () => {
    const s = foldRun([...training(), saved(10), saved(20), { type: 'CheckpointDeleted', data: { run_id: RUN, checkpoint_id: CKPT(10), uri: 'x', reason: 'keep_last', existed: true } }]);
    expect(s.checkpoints.map((c) => c.checkpoint_id)).toEqual([CKPT(20)]);
  });

  it('a save reported by a task of the attempt moves its sequence number; a save without one leaves it', () => {
    const s = foldRun([...training(), saved(10, { task_id: T(1, 0), seq: 7 }), saved(11, { task_id: T(1, 1) })]);
    expect(current(s).tasks.map((t) => t.last_seq)).toEqual([7, 0]);
  });

  it('a restore is marked on its task', () => {
    const s = foldRun([...training(), { type: 'CheckpointRestored', data: { run_id: RUN, checkpoint_id: CKPT(1), step: 1, bytes: 1, restore_seconds: 1, stage: 'pretrain', attempt: 1, task_id: T(1, 1), seq: 2 } }]);
    expect(current(s).tasks.map((t) => [t.restored, t.last_seq])).toEqual([[undefined, 0], [true, 2]]);
  });
});

describe('task reports', () => {
  it('a report from a task of no current attempt changes no task, and a report without a task only the progress', () => {
    const before = foldRun(training());
    const stray = foldRun([...training(), progress('task_9_9', 5, { seq: 3, elapsed_s: 99, received_at: AT(60) }), taskFailed('task_9_9', A, 'crash')]);
    // Neither its tasks, nor its leader's time, step or last report: the attempt is as it was.
    expect(current(stray)).toEqual(current(before));
    expect(stray.progress).toEqual({ stage: 'pretrain', step: 5, tokens: 50, loss: null });
    const anonymous = foldRun([...training(), { type: 'ProgressRecorded', data: { run_id: RUN, stage: 'pretrain', step: 3, tokens: 30 } }]);
    expect(current(anonymous)).toEqual(current(before));
  });

  it('a task that failed is marked failed and its attempt keeps running until the stage fails', () => {
    const s = foldRun([...training(), taskFailed(T(1, 1), B, 'crash')]);
    expect(current(s).tasks.map((t) => t.status)).toEqual(['assigned', 'failed']);
    expect(current(s).status).toBe('running');
  });

  it('a stopped task without a sequence number keeps the last one it reported', () => {
    const s = foldRun([...training(), progress(T(1, 0), 5, { seq: 4 }), { type: 'TaskStopped', data: { run_id: RUN, task_id: T(1, 0), stage: 'pretrain', attempt: 1, node_id: A, reason: 'withdrawn' } }]);
    expect(current(s).tasks[0]).toMatchObject({ status: 'stopped', last_seq: 4 });
  });

  it('a completed task keeps the longest time its leader reported', () => {
    const s = foldRun([
      ...training(),
      progress(T(1, 0), 5, { elapsed_s: 300 }),
      { type: 'TaskCompleted', data: { run_id: RUN, task_id: T(1, 0), stage: 'pretrain', attempt: 1, node_id: A, seq: 9, elapsed_s: 100 } },
    ]);
    expect(current(s).leader_elapsed_s).toBe(300);
    expect(current(s).tasks[0]).toMatchObject({ status: 'completed', last_seq: 9 });
  });
});

describe('cost', () => {
  const started_at = AT(0);
  it('charges the control plane`s clock from assignment to the last report received, on every node of the attempt', () => {
    const s = foldRun([...planned(), stageStarted('pretrain', 1, { started_at }), progress(T(1, 0), 1, { received_at: AT(3600) })]);
    expect(current(s).started_at_ms).toBe(Date.parse(started_at));
    expect(current(s).last_report_ms).toBe(Date.parse(AT(3600)));
    // 1 hour × 2 nodes × 8 GPUs × $2.5.
    expect(s.spentUsd).toBeCloseTo(40, 6);
  });

  it('a report without a time of receipt, or with an unreadable one, keeps the last time; an earlier one does not move it back', () => {
    const base = [...planned(), stageStarted('pretrain', 1, { started_at }), progress(T(1, 0), 1, { received_at: AT(60) })];
    expect(current(foldRun([...base, progress(T(1, 0), 2)])).last_report_ms).toBe(Date.parse(AT(60)));
    expect(current(foldRun([...base, progress(T(1, 0), 2, { received_at: 'yesterday' })])).last_report_ms).toBe(Date.parse(AT(60)));
    expect(current(foldRun([...base, progress(T(1, 0), 2, { received_at: AT(30) })])).last_report_ms).toBe(Date.parse(AT(60)));
    expect(current(foldRun([...planned(), stageStarted('pretrain', 1, { started_at: 'soon' })])).started_at_ms).toBeNull();
  });

  it('a trainer`s claim above the clock is charged as claimed; one below it, at the clock', () => {
    const attempt = (leader_elapsed_s: number): StageAttempt => ({ stage: 'pretrain', attempt: 1, status: 'running', tasks: [], leader_elapsed_s, resume_from: null, started_at_ms: 0, last_report_ms: 60_000 });
    expect(chargedSeconds(attempt(10))).toBe(60);
    expect(chargedSeconds(attempt(90))).toBe(90);
    expect(chargedSeconds({ ...attempt(5), last_report_ms: null })).toBe(5);
  });

  it('a retry adds its cost to the attempts before it', () => {
    const s = foldRun([
      ...planned(),
      stageStarted('pretrain', 1, { started_at }),
      progress(T(1, 0), 1, { received_at: AT(1800) }),
      stageFailed('pretrain', 1),
      stageStarted('pretrain', 2, { started_at: AT(1800) }),
      progress(T(2, 0), 1, { received_at: AT(3600) }),
    ]);
    expect(s.accruedUsd).toBeCloseTo(20, 6);
    expect(s.spentUsd).toBeCloseTo(40, 6);
  });
});

describe('ladder stages', () => {
  it('keeps each ladder stage`s proxy loss, and none for a ladder stage that reported no metrics', () => {
    const s = foldRun([
      ...reserved(),
      stageStarted('ladder_web', 1, { nodes: [] }),
      { type: 'StageCompleted', data: { run_id: RUN, stage: 'ladder_web', attempt: 1, metrics: { proxy_eval_loss: 3.5 } } },
      stageStarted('ladder_custom', 1, { nodes: [] }),
      { type: 'StageCompleted', data: { run_id: RUN, stage: 'ladder_custom', attempt: 1, metrics: { proxy_eval_loss: 3.1 } } },
      stageStarted('ladder_none', 1, { nodes: [] }),
      { type: 'StageCompleted', data: { run_id: RUN, stage: 'ladder_none', attempt: 1 } },
      { type: 'StageCompleted', data: { run_id: RUN, stage: 'pretrain', attempt: 1, metrics: { proxy_eval_loss: 9 } } },
    ]);
    expect(s.ladderLosses).toEqual({ ladder_web: 3.5, ladder_custom: 3.1 });
    expect(s.completedStages).toEqual(['ladder_web', 'ladder_custom', 'ladder_none', 'pretrain']);
  });
});

describe('withdrawing tasks', () => {
  const withdraw = (stage: string, attempt: number, task_ids: string[]): RunEvent => ({ type: 'TasksWithdrawn', data: { run_id: RUN, stage, attempt, task_ids, reason: 'cancel' } });

  it('withdraws only the tasks named that have not completed or stopped, and ends a running attempt', () => {
    const s = foldRun([
      ...planned(),
      stageStarted('pretrain', 1, { nodes: [A, B, 'node_c'] }),
      { type: 'TaskCompleted', data: { run_id: RUN, task_id: T(1, 0), stage: 'pretrain', attempt: 1, node_id: A, seq: 3, elapsed_s: 1 } },
      { type: 'TaskStopped', data: { run_id: RUN, task_id: T(1, 1), stage: 'pretrain', attempt: 1, node_id: B, reason: 'asked' } },
      withdraw('pretrain', 1, [T(1, 0), T(1, 1)]),
    ]);
    expect(current(s).tasks.map((t) => t.status)).toEqual(['completed', 'stopped', 'assigned']);
    expect(current(s).status).toBe('withdrawn');
    const named = foldRun([...training(), withdraw('pretrain', 1, [T(1, 1)])]);
    expect(current(named).tasks.map((t) => t.status)).toEqual(['assigned', 'withdrawn']);
  });

  it('ignores a withdrawal of another stage or attempt', () => {
    const before = foldRun(training());
    expect(current(foldRun([...training(), withdraw('pretrain', 2, [T(1, 0)])]))).toEqual(current(before));
    expect(current(foldRun([...training(), withdraw('mid_train', 1, [T(1, 0)])]))).toEqual(current(before));
  });

  it('an attempt that had already failed stays failed when its tasks are withdrawn', () => {
    const s = foldRun([...training(), stageFailed('pretrain', 1), withdraw('pretrain', 1, [T(1, 0), T(1, 1)])]);
    expect(current(s).status).toBe('failed');
    expect(current(s).tasks.map((t) => t.status)).toEqual(['withdrawn', 'withdrawn']);
  });
});

describe('failed and suspect nodes, and the incident', () => {
  it('a GPU fault excludes its node; a crash does not, and keeps the nodes excluded before', () => {
    expect(foldRun([...training(), taskFailed(T(1, 1), B, 'gpu_fault')]).excludedNodes).toEqual([B]);
    expect(foldRun([...training(), nodeLost(A), taskFailed(T(1, 1), B, 'crash')]).excludedNodes).toEqual([A]);
  });

  it('the first failure detected is the incident; a report without a detection time keeps it', () => {
    const s = foldRun([...training(), taskFailed(T(1, 1), B, 'crash', AT(10)), taskFailed(T(1, 0), A, 'crash')]);
    expect(s.incident).toEqual({ kind: 'crash', node_id: B, task_id: T(1, 1), evidence_at: AT(10), detected_at: AT(10) });
    const lost = foldRun([...training(), nodeLost(A, { detected_at: AT(20), task_id: T(1, 0) }), nodeLost(B)]);
    expect(lost.incident).toStrictEqual({ kind: 'node_lost', node_id: A, task_id: T(1, 0), evidence_at: AT(1), detected_at: AT(20) });
    expect(foldRun([...training(), nodeLost(A, { detected_at: AT(20) })]).incident).toStrictEqual({ kind: 'node_lost', node_id: A, evidence_at: AT(1), detected_at: AT(20) });
  });

  it('a hang makes its node a suspect and its incident a hang, with the last progress as evidence', () => {
    const s = foldRun([...training(), taskHung(B, T(1, 1), AT(30))]);
    expect(s.suspectNodes).toEqual([B]);
    expect(s.excludedNodes).toEqual([]);
    expect(s.incident).toEqual({ kind: 'hang', node_id: B, task_id: T(1, 1), evidence_at: AT(2), detected_at: AT(30) });
    expect(s.status).toBe('recovering');
    expect(s.resumeTo).toBe('training');
  });

  it('a second loss while recovering keeps the state to resume to; a node lost twice is listed once', () => {
    const s = foldRun([...training(), nodeLost(A), nodeLost(A), nodeLost(B)]);
    expect(s.resumeTo).toBe('training');
    expect(s.excludedNodes).toEqual([A, B]);
  });

  it('a recovered node is no longer excluded; the others stay', () => {
    const s = foldRun([...training(), nodeLost(A), nodeLost(B), { type: 'NodeRecovered', data: { run_id: RUN, node_id: A, last_heartbeat_at: AT(9) } }]);
    expect(s.excludedNodes).toEqual([B]);
  });

  it('resuming returns the run to the state it left, and clears the incident', () => {
    const s = foldRun([...planned(), stageStarted('sft'), nodeLost(A, { detected_at: AT(5) }), { type: 'RunResumed', data: { run_id: RUN, from_checkpoint_id: null } }]);
    expect(s).toMatchObject({ status: 'post_training', resumeTo: null, incident: null });
  });
});

describe('a loss-spike restart', () => {
  const proposed = (o: Partial<Extract<RunEvent, { type: 'RestartProposed' }>['data']> = {}): RunEvent => ({ type: 'RestartProposed', data: { run_id: RUN, from_checkpoint_id: CKPT(20), reason: 'spike', ...o } });

  it('waits for an operator, from the named checkpoint, not yet approved; approval returns to the state it left', () => {
    const s = foldRun([...training(), saved(10), saved(20), proposed({ stage: 'pretrain', skip_steps: { from: 20, to: 30 } })]);
    expect(s.status).toBe('awaiting_operator');
    expect(s.resumeTo).toBe('training');
    expect(s.restart).toStrictEqual({ from: { checkpoint_id: CKPT(20), uri: `s3://b/${RUN}/step-20`, step: 20 }, skip_steps: { from: 20, to: 30 }, stage: 'pretrain', approved: false });
    const approved = foldRun([...training(), saved(20), proposed(), { type: 'RestartApproved', data: { run_id: RUN, confirmation_ref: 'cfm_3' } }]);
    expect(approved).toMatchObject({ status: 'training', resumeTo: null, restart: { approved: true } });
  });

  it('a second proposal while waiting keeps the state to return to; a proposal with an unknown checkpoint restarts from scratch', () => {
    const s = foldRun([...training(), proposed(), proposed({ from_checkpoint_id: CKPT(99) })]);
    expect(s.resumeTo).toBe('training');
    expect(s.restart).toMatchObject({ from: null, skip_steps: null, stage: 'pretrain' });
  });

  it('a proposal before any stage names no stage', () => {
    expect(foldRun([...reserved(), proposed()]).restart?.stage).toBe('');
  });
});
