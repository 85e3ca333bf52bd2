import { describe, expect, it } from 'vitest';
import { EXPECTED_LAUNCH_S, decideNodeFailure, expectedStartupSeconds, firstStepAllowance, judgeNode, nextCommands, taskIdFor, type NodeObservation, type RunEvent } from '@ito/domain';
import { SETTINGS, T, lostFinding } from './support/monitor-fixtures.js';
import { NODES, RUN, fold, planned, started } from './support/run-history.js';

const clock = (now: number, grace = -100) => ({ now: T(now), grace_from: T(grace) });
/** The bound that decides in these tests: 20 s, far under what the plan expects of a real start-up. */
const BOUNDED = { ...SETTINGS, first_step_max_s: 20 };
const T0 = taskIdFor(RUN, 'pretrain', 1, 0);

/** A node that beats (its newest beat at `beat`) for a task assigned at 0 that has reported no step. */
const starting = (beat: number, o: Partial<NodeObservation> = {}): NodeObservation => ({
  node_id: NODES[0]!,
  last_heartbeat_at: T(beat),
  progress: null,
  planned_step_s: 2,
  startup: { assigned_at: T(0), restore_bytes: 0, world_size: 1 },
  ...o,
});

describe('the start-up allowance', () => {
  it('expects the launch, the restore of the weights the task starts from (over its nodes), and one planned step', () => {
    expect(expectedStartupSeconds({ restore_bytes: 0, world_size: 1 }, null)).toBe(EXPECTED_LAUNCH_S);
    expect(expectedStartupSeconds({ restore_bytes: 40e9, world_size: 2 }, 3)).toBe(EXPECTED_LAUNCH_S + 10 + 3);
    // Nonsense step times count for nothing; a world of 0 reads as one node.
    expect(expectedStartupSeconds({ restore_bytes: 4e9, world_size: 0 }, -1)).toBe(EXPECTED_LAUNCH_S + 2);
    expect(expectedStartupSeconds({ restore_bytes: 0, world_size: 1 }, Number.POSITIVE_INFINITY)).toBe(EXPECTED_LAUNCH_S);
  });

  it('is k × the expected start-up, bounded by the operator, never under the misses, in whole seconds', () => {
    const facts = { restore_bytes: 40e9, world_size: 2 };
    expect(firstStepAllowance(facts, 3, SETTINGS)).toBe(5 * (EXPECTED_LAUNCH_S + 13));
    expect(firstStepAllowance(facts, 3, { ...SETTINGS, first_step_max_s: 100 })).toBe(100);
    expect(firstStepAllowance(facts, 3, { ...SETTINGS, first_step_max_s: 100.2 })).toBe(101);
    // A bound under the misses (2 s × 3) gives way to them: a step is only seen at the next heartbeat.
    expect(firstStepAllowance(facts, 3, { ...SETTINGS, first_step_max_s: 1 })).toBe(6);
  });

  it('calls a task hung once its newest heartbeat still names no step after the allowance', () => {
    expect(judgeNode(starting(20), BOUNDED, clock(20))).toEqual({ kind: 'alive' });
    expect(judgeNode(starting(20.5), BOUNDED, clock(20.5))).toEqual({
      kind: 'hung',
      stuck_s: 20.5,
      expected_step_s: 2,
      last_progress_at: T(0),
      first_step_allowance_s: 20,
    });
    // Measured to the newest heartbeat, not to now: a late beat is silence, judged by the misses.
    expect(judgeNode(starting(19), BOUNDED, clock(24))).toEqual({ kind: 'alive' });
    expect(judgeNode(starting(19), BOUNDED, clock(25.5))).toMatchObject({ kind: 'lost' });
    // Without a plan's step time the finding still stands, judged on the allowance alone.
    expect(judgeNode(starting(21, { planned_step_s: null }), BOUNDED, clock(21))).toMatchObject({ kind: 'hung', expected_step_s: 0, first_step_allowance_s: 20 });
  });

  it('judges no task without steps, none past its first step, and nobody while the monitor does not trust its view', () => {
    expect(judgeNode(starting(300, { startup: null }), BOUNDED, clock(300))).toEqual({ kind: 'alive' });
    expect(judgeNode(starting(300, { startup: undefined }), BOUNDED, clock(300))).toEqual({ kind: 'alive' });
    // Past its first step, the step's own rule applies (moving at 299: alive).
    expect(judgeNode(starting(300, { progress: { step: 1, progress_at: T(299), step_s: null } }), BOUNDED, clock(300))).toEqual({ kind: 'alive' });
    expect(judgeNode(starting(300), BOUNDED, clock(300, 299.5))).toEqual({ kind: 'alive' });
    // A node never heard from, within the misses of the monitor's trust point: silence, for the misses to judge.
    expect(judgeNode(starting(0, { last_heartbeat_at: null }), BOUNDED, clock(300, 297))).toEqual({ kind: 'alive' });
    expect(judgeNode(starting(0, { last_heartbeat_at: null }), BOUNDED, clock(300, 293))).toMatchObject({ kind: 'lost' });
  });

  it('a task with no first step: TaskHung naming the allowance, its attempt withdrawn and failed as a hang', () => {
    const verdict = judgeNode(starting(21), BOUNDED, clock(21));
    if (verdict.kind !== 'hung') throw new Error('expected a hang');
    const history = started(planned(), 'pretrain');
    const events = decideNodeFailure(fold(history), lostFinding({ node_id: NODES[0]!, task_id: T0, verdict, last_heartbeat_at: T(21), detected_at: T(21) }), BOUNDED);
    expect(events.map((e) => e.type)).toEqual(['TaskHung', 'TasksWithdrawn', 'StageFailed']);
    expect(events[0]!.data).toMatchObject({ task_id: T0, last_progress_at: T(0).toISOString(), first_step_allowance_s: 20, evidence: 'no first step within 20 s', stuck_s: 21 });
    expect(events[0]!.data).not.toHaveProperty('step');
    expect(events[2]!.data).toMatchObject({ failure: 'hang', node_id: NODES[0], reason: `task ${T0} hung on node ${NODES[0]}: no first step within 20 s of its start (start-up allowance)` });
    // Handled like any hang: the node is a suspect, chosen after every other, not kept out.
    expect(fold([...history, ...events]).suspectNodes).toEqual([NODES[0]]);
  });

  it('retried by the same rules; with no attempt left the run fails naming the last attempt\'s reason', () => {
    const verdict = judgeNode(starting(21), BOUNDED, clock(21));
    if (verdict.kind !== 'hung') throw new Error('expected a hang');
    let h: RunEvent[] = planned();
    for (const attempt of [1, 2, 3]) {
      h = started(h, 'pretrain', attempt);
      const task_id = taskIdFor(RUN, 'pretrain', attempt, 0);
      h = [...h, ...decideNodeFailure(fold(h), lostFinding({ node_id: NODES[0]!, task_id, attempt, verdict, last_heartbeat_at: T(21), detected_at: T(21) }), BOUNDED)];
      if (attempt < 3) expect(nextCommands(fold(h))).toMatchObject([{ type: 'StartStage', stage: 'pretrain', attempt: attempt + 1 }]);
    }
    const task = taskIdFor(RUN, 'pretrain', 3, 0);
    expect(nextCommands(fold(h))).toEqual([
      { type: 'FailRun', reason: `stage pretrain failed 3 times; the last attempt: task ${task} hung on node ${NODES[0]}: no first step within 20 s of its start (start-up allowance)` },
    ]);
  });
});
