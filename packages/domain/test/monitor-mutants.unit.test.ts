import { describe, expect, it } from 'vitest';
import { decideNodeFailure, decideNodeRecovered, decideTaskReport, judgeNode, nextGraceFrom, resumeFacts, taskIdFor, type NodeFailure, type RunAggregate, type RunEvent } from '@ito/domain';
import { SETTINGS, T, lostFinding } from './support/monitor-fixtures.js';
import { NODES, RUN, fold, planned, reserved, started } from './support/run-history.js';

/**
 * The edges of the monitor's rules that the scenario tests pass over: exact boundaries, every state that makes a
 * finding late, the withdrawn set when tasks differ in status, and the reason text the run's history keeps.
 */
const T0 = taskIdFor(RUN, 'pretrain', 1, 0);
const T1 = taskIdFor(RUN, 'pretrain', 1, 1);

describe('liveness boundaries', () => {
  const silentSince0 = { node_id: NODES[0]!, planned_step_s: 1, last_heartbeat_at: T(0), progress: null };

  it('after a trust point, a node silent since long before is lost only once the misses have passed since it', () => {
    expect(judgeNode(silentSince0, SETTINGS, { now: T(61.9), grace_from: T(60) })).toEqual({ kind: 'alive' });
    // Exactly interval × misses (6 s) of observed silence is not yet more than the misses.
    expect(judgeNode(silentSince0, SETTINGS, { now: T(66), grace_from: T(60) })).toEqual({ kind: 'alive' });
    expect(judgeNode(silentSince0, SETTINGS, { now: T(66.5), grace_from: T(60) })).toEqual({ kind: 'lost', silent_s: 66.5 });
  });

  it('a sweep exactly one interval after the previous keeps the trust point; a longer gap resets it', () => {
    expect(nextGraceFrom({ last_sweep_at: T(58), grace_from: T(-100) }, T(60), SETTINGS)).toEqual(T(-100));
    expect(nextGraceFrom({ last_sweep_at: T(57.9), grace_from: T(-100) }, T(60), SETTINGS)).toEqual(T(60));
    // A sweep remembered without its trust point is a start.
    expect(nextGraceFrom({ last_sweep_at: T(59.5), grace_from: null }, T(60), SETTINGS)).toEqual(T(60));
  });

  it('a zero or negative expected step time never makes a hang, however long the step stands still', () => {
    const standing = (planned_step_s: number) => ({
      node_id: NODES[0]!,
      planned_step_s,
      last_heartbeat_at: T(100),
      progress: { step: 7, progress_at: T(0), step_s: null },
    });
    expect(judgeNode(standing(0), SETTINGS, { now: T(100), grace_from: T(-100) })).toEqual({ kind: 'alive' });
    expect(judgeNode(standing(-1), SETTINGS, { now: T(100), grace_from: T(-100) })).toEqual({ kind: 'alive' });
    expect(judgeNode(standing(1), SETTINGS, { now: T(100), grace_from: T(-100) })).toEqual({
      kind: 'hung',
      stuck_s: 100,
      expected_step_s: 1,
      last_progress_at: T(0),
    });
  });

  it('judges nothing until one interval after the trust point, not even a step that stood still before it', () => {
    const standing = { node_id: NODES[0]!, planned_step_s: 1, last_heartbeat_at: T(100), progress: { step: 7, progress_at: T(0), step_s: null } };
    expect(judgeNode(standing, SETTINGS, { now: T(100), grace_from: T(99) })).toEqual({ kind: 'alive' });
    // Exactly one interval (2 s) after it, the node is judged.
    expect(judgeNode(standing, SETTINGS, { now: T(100), grace_from: T(98) })).toMatchObject({ kind: 'hung', stuck_s: 100 });
  });
});

describe('node failure decisions at their edges', () => {
  const running = () => started(planned(), 'pretrain');
  const finding = lostFinding;
  /** T0 has reported progress (running); T1 has completed. */
  const mixed = (): RunEvent[] => {
    let h = running();
    h = [...h, ...decideTaskReport(fold(h), { type: 'progress', task_id: T0, node_id: NODES[0]!, body: { attempt: 1, seq: 1, step: 5, tokens: 10, elapsed_s: 1 } }).events];
    h = [...h, ...decideTaskReport(fold(h), { type: 'complete', task_id: T1, node_id: NODES[1]!, body: { attempt: 1, seq: 2, step: 9, elapsed_s: 2 } }).events];
    return h;
  };

  it('a lost node: the reason names the silence and the rule, and the failure is node_lost', () => {
    const events = decideNodeFailure(fold(running()), finding(), SETTINGS);
    const reason = `node ${NODES[1]} lost: no heartbeat for 6.4 s (3 × 2 s)`;
    expect(events[0]).toEqual({
      type: 'NodeLost',
      data: { run_id: RUN, node_id: NODES[1], task_id: T1, stage: 'pretrain', attempt: 1, last_heartbeat_at: T(0).toISOString(), detected_at: T(6.4).toISOString(), misses: 3, interval_s: 2, silent_s: 6.4 },
    });
    expect(events[1]!.data).toMatchObject({ reason });
    expect(events[2]!.data).toEqual({ run_id: RUN, stage: 'pretrain', attempt: 1, reason, task_id: T1, node_id: NODES[1], failure: 'node_lost' });
  });

  it('a hung task: the reason names the stall, k and the step time', () => {
    const verdict = { kind: 'hung' as const, stuck_s: 12.3456, expected_step_s: 2.0004, last_progress_at: T(8) };
    const events = decideNodeFailure(fold(running()), finding({ node_id: NODES[0]!, task_id: T0, verdict, last_heartbeat_at: T(19), detected_at: T(20) }), SETTINGS);
    const reason = `task ${T0} hung on node ${NODES[0]}: no progress for 12.346 s (k 5 × 2 s per step)`;
    expect(events[1]!.data).toMatchObject({ reason });
    expect(events[2]!.data).toMatchObject({ reason, failure: 'hang' });
    expect(events[0]!.data).not.toHaveProperty('step');
  });

  it('withdraws only the tasks still active: the running one, not the completed one', () => {
    const h = mixed();
    expect(fold(h).current?.tasks.map((t) => t.status)).toEqual(['running', 'completed']);
    const verdict = { kind: 'hung' as const, stuck_s: 30, expected_step_s: 2, last_progress_at: T(1) };
    const events = decideNodeFailure(fold(h), finding({ node_id: NODES[0]!, task_id: T0, verdict }), SETTINGS);
    expect(events.map((e) => e.type)).toEqual(['TaskHung', 'TasksWithdrawn', 'StageFailed']);
    expect((events[1]!.data as { task_ids: string[] }).task_ids).toEqual([T0]);
  });

  it('a finding about a task that already completed appends nothing', () => {
    expect(decideNodeFailure(fold(mixed()), finding(), SETTINGS)).toEqual([]);
  });

  it('a finding before any stage started appends nothing', () => {
    expect(decideNodeFailure(fold(reserved()), finding(), SETTINGS)).toEqual([]);
  });

  it('a finding while the run is cancelling, waiting for its operator, cleaning up, ended or asked to stop appends nothing', () => {
    const state = fold(running());
    expect(decideNodeFailure(state, finding(), SETTINGS)).toHaveLength(3);
    const late: RunAggregate[] = [
      // The attempt already ended (its tasks not yet marked): the finding came late.
      { ...state, current: { ...state.current!, status: 'failed' } },
      { ...state, status: 'cancelling' },
      { ...state, status: 'awaiting_operator' },
      { ...state, status: 'cleaning_up' },
      { ...state, status: 'cleaned' },
      { ...state, terminal: 'failed' },
      { ...state, stopRequested: { reason: 'budget_exhausted', spent_usd: 10, ceiling_usd: 10 } },
    ];
    for (const s of late) expect(decideNodeFailure(s, finding(), SETTINGS)).toEqual([]);
  });

  it('a recovered node records when it was declared lost, when that is known', () => {
    const h: RunEvent[] = [...running(), ...decideNodeFailure(fold(running()), finding(), SETTINGS)];
    expect(decideNodeRecovered(fold(h), NODES[1]!, T(30), T(6.4))).toEqual([
      { type: 'NodeRecovered', data: { run_id: RUN, node_id: NODES[1], last_heartbeat_at: T(30).toISOString(), lost_at: T(6.4).toISOString() } },
    ]);
    expect(decideNodeRecovered(fold(h), NODES[1]!, T(30), null)).toEqual([
      { type: 'NodeRecovered', data: { run_id: RUN, node_id: NODES[1], last_heartbeat_at: T(30).toISOString() } },
    ]);
  });

  it('resume facts before any attempt: every node is new, none replaced', () => {
    expect(resumeFacts(fold(reserved()), [NODES[0]!], T(10), 1)).toEqual({ nodes: [NODES[0]], spare_nodes: [NODES[0]], replaced_nodes: [] });
  });
});
