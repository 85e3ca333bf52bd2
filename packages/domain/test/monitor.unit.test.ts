import { describe, expect, it } from 'vitest';
import {
  decideNodeFailure,
  decideNodeRecovered,
  decideTaskReport,
  expectedStepSeconds,
  judgeNode,
  nextCommands,
  nextGraceFrom,
  resumeFacts,
  taskIdFor,
  type NodeFailure,
  type RunEvent,
} from '@ito/domain';
import { SETTINGS, T, lostFinding } from './support/monitor-fixtures.js';
import { NODES, RUN, fold, planned, started } from './support/run-history.js';

const clock = (now: number, grace = -100) => ({ now: T(now), grace_from: T(grace) });
const T0 = taskIdFor(RUN, 'pretrain', 1, 0);
const T1 = taskIdFor(RUN, 'pretrain', 1, 1);

describe('liveness rules', () => {
  const node = { node_id: NODES[0]!, planned_step_s: 1 };

  it('declares a node lost only after misses × interval of silence', () => {
    expect(judgeNode({ ...node, last_heartbeat_at: T(0), progress: null }, SETTINGS, clock(6))).toEqual({ kind: 'alive' });
    expect(judgeNode({ ...node, last_heartbeat_at: T(0), progress: null }, SETTINGS, clock(6.5))).toMatchObject({ kind: 'lost', silent_s: 6.5 });
    expect(judgeNode({ ...node, last_heartbeat_at: null, progress: null }, SETTINGS, clock(1))).toMatchObject({ kind: 'lost' });
  });

  it('declares a hang when the node beats but the step has not moved for k × its step time, never under the misses', () => {
    const beating = { ...node, last_heartbeat_at: T(20) };
    const stuck = (since: number, step_s: number | null) => ({ ...beating, progress: { step: 40, progress_at: T(since), step_s } });
    expect(judgeNode(stuck(10, 2), SETTINGS, clock(20))).toEqual({ kind: 'alive' });
    expect(judgeNode(stuck(9, 2), SETTINGS, clock(20))).toMatchObject({ kind: 'hung', stuck_s: 11, expected_step_s: 2 });
    // Unmeasured: the plan's step time; a tiny step time still waits one interval.
    expect(judgeNode(stuck(14, null), SETTINGS, clock(20))).toEqual({ kind: 'alive' });
    expect(judgeNode(stuck(13.9, null), SETTINGS, clock(20))).toMatchObject({ kind: 'hung', expected_step_s: 1 });
    expect(judgeNode(stuck(14.5, 0.01), SETTINGS, clock(20))).toEqual({ kind: 'alive' });
    expect(judgeNode(stuck(13.5, 0.01), SETTINGS, clock(20))).toMatchObject({ kind: 'hung' });
    expect(judgeNode({ ...beating, planned_step_s: null, progress: null }, SETTINGS, clock(20))).toEqual({ kind: 'alive' });
  });

  it('before its own step time is measured, a resumed attempt is judged on the stage\'s measured one, not the plan\'s', () => {
    // The plan models 100 s per step; the stage's earlier attempt measured 0.5 s (a simulated clock, or a faster
    // node). Stuck for 7 s: hung against 5 × 0.5 s (never under the misses' 6 s), where the plan would wait 500 s.
    const resumed = { ...node, planned_step_s: 100, last_heartbeat_at: T(20), progress: { step: 40, progress_at: T(13), step_s: null } };
    expect(judgeNode(resumed, SETTINGS, clock(20))).toEqual({ kind: 'alive' });
    expect(judgeNode({ ...resumed, stage_step_s: 0.5 }, SETTINGS, clock(20))).toMatchObject({ kind: 'hung', stuck_s: 7, expected_step_s: 0.5 });
    expect(judgeNode({ ...resumed, stage_step_s: 2 }, SETTINGS, clock(20))).toEqual({ kind: 'alive' });
    // Its own measurement, once there, wins; nothing usable falls back to the plan.
    expect(expectedStepSeconds({ progress: { step: 1, progress_at: T(0), step_s: 3 }, stage_step_s: 0.5, planned_step_s: 100 })).toBe(3);
    expect(expectedStepSeconds({ progress: null, stage_step_s: 0, planned_step_s: 100 })).toBe(100);
    expect(expectedStepSeconds({ progress: null, stage_step_s: null, planned_step_s: null })).toBeNull();
  });

  it('judges a hang by what the heartbeats said, so a late heartbeat is silence, not a hang', () => {
    // The step moved at 13.5 and the last beat (at 15, still within the misses) said so: 6.5 s since that move
    // by the clock, but nothing from the node says it stopped moving.
    const late = { ...node, last_heartbeat_at: T(15), progress: { step: 40, progress_at: T(13.5), step_s: 0.01 } };
    expect(judgeNode(late, SETTINGS, clock(20))).toEqual({ kind: 'alive' });
    // The same beat arriving at 20 with the step unchanged is a hang.
    expect(judgeNode({ ...late, last_heartbeat_at: T(20) }, SETTINGS, clock(20))).toMatchObject({ kind: 'hung', stuck_s: 6.5 });
  });

  it('after a pause counts silence only from then: every agent has the misses to be heard again, and none is judged in the first interval', () => {
    const silent = { ...node, last_heartbeat_at: T(0), progress: { step: 1, progress_at: T(0), step_s: 1 } };
    // The monitor's previous sweep was 60 s ago: its trust point moves to now.
    const grace = nextGraceFrom({ last_sweep_at: T(0), grace_from: T(-100) }, T(60), SETTINGS);
    expect(grace).toEqual(T(60));
    expect(judgeNode(silent, SETTINGS, { now: T(61), grace_from: grace })).toEqual({ kind: 'alive' });
    // An agent whose beats failed in the outage retries on its own cycle: more than one interval is not yet lost.
    expect(judgeNode(silent, SETTINGS, { now: T(62.1), grace_from: grace })).toEqual({ kind: 'alive' });
    expect(judgeNode(silent, SETTINGS, { now: T(66), grace_from: grace })).toEqual({ kind: 'alive' });
    // Silent for the misses since the monitor could see again: lost, its evidence the whole silence.
    expect(judgeNode(silent, SETTINGS, { now: T(66.1), grace_from: grace })).toMatchObject({ kind: 'lost', silent_s: 66.1 });
    // A node that beat since is judged as usual.
    expect(judgeNode({ ...silent, last_heartbeat_at: T(61), progress: { step: 2, progress_at: T(61), step_s: 1 } }, SETTINGS, { now: T(66.1), grace_from: grace })).toEqual({ kind: 'alive' });
    // Sweeps that follow closely keep the trust point; a first sweep sets it.
    expect(nextGraceFrom({ last_sweep_at: T(59.5), grace_from: T(-100) }, T(60), SETTINGS)).toEqual(T(-100));
    expect(nextGraceFrom({ last_sweep_at: null, grace_from: null }, T(60), SETTINGS)).toEqual(T(60));
  });
});

describe('node failures', () => {
  const running = () => started(planned(), 'pretrain');
  const lost = lostFinding;

  it('a lost node: NodeLost with its evidence, every task of the attempt withdrawn, the attempt failed, retried on other nodes from the last checkpoint', () => {
    const h: RunEvent[] = [...running(), ...decideNodeFailure(fold(running()), lost(), SETTINGS)];
    expect(h.slice(-3).map((e) => e.type)).toEqual(['NodeLost', 'TasksWithdrawn', 'StageFailed']);
    expect(h.at(-3)!.data).toMatchObject({ node_id: NODES[1], last_heartbeat_at: T(0).toISOString(), detected_at: T(6.4).toISOString(), misses: 3, interval_s: 2 });
    expect((h.at(-2)!.data as { task_ids: string[] }).task_ids.sort()).toEqual([T0, T1].sort());
    const state = fold(h);
    expect(state.status).toBe('recovering');
    expect(state.excludedNodes).toEqual([NODES[1]]);
    expect(state.incident).toMatchObject({ kind: 'node_lost', node_id: NODES[1], evidence_at: T(0).toISOString() });
    expect(nextCommands(state)).toContainEqual(expect.objectContaining({ type: 'StartStage', stage: 'pretrain', attempt: 2 }));
    // The failed node's late report is refused (fenced), and nothing is appended.
    const late = () => decideTaskReport(state, { type: 'progress', task_id: T1, node_id: NODES[1]!, body: { attempt: 1, seq: 1, step: 5, tokens: 1, elapsed_s: 1 } });
    expect(late).toThrow(/not the current attempt/);
    // A second finding about the same attempt adds nothing.
    expect(decideNodeFailure(state, lost({ node_id: NODES[0]!, task_id: T0 }), SETTINGS)).toEqual([]);
  });

  it('a hung task: TaskHung with the last progress and the step time it was judged on', () => {
    const events = decideNodeFailure(
      fold(running()),
      lost({ node_id: NODES[0]!, task_id: T0, step: 41, verdict: { kind: 'hung', stuck_s: 12, expected_step_s: 2, last_progress_at: T(8) }, last_heartbeat_at: T(19), detected_at: T(20) }),
      SETTINGS,
    );
    expect(events.map((e) => e.type)).toEqual(['TaskHung', 'TasksWithdrawn', 'StageFailed']);
    expect(events[0]!.data).toMatchObject({ task_id: T0, last_progress_at: T(8).toISOString(), last_heartbeat_at: T(19).toISOString(), expected_step_s: 2, k: 5, step: 41 });
    expect(events[2]!.data).toMatchObject({ failure: 'hang', node_id: NODES[0] });
    // The node is still heard from: a suspect chosen after every other node, not kept out of the run.
    const state = fold([...running(), ...events]);
    expect(state.suspectNodes).toEqual([NODES[0]]);
    expect(state.excludedNodes).toEqual([]);
  });

  it('a finding about an attempt that moved on, or a task that ended, appends nothing', () => {
    expect(decideNodeFailure(fold(running()), lost({ attempt: 2 }), SETTINGS)).toEqual([]);
    expect(decideNodeFailure(fold(running()), lost({ task_id: T0 }), SETTINGS)).toEqual([]);
  });

  it('resume facts: the spare taking the failed node`s place, and the latencies of the incident', () => {
    const h: RunEvent[] = [...running(), ...decideNodeFailure(fold(running()), lost(), SETTINGS)];
    const spare = `node_${'c'.repeat(32)}`;
    const facts = resumeFacts(fold(h), [NODES[0]!, spare], T(10), 2);
    expect(facts).toMatchObject({ nodes: [NODES[0], spare], spare_nodes: [spare], replaced_nodes: [NODES[1]], detection_latency_s: 6.4, resume_latency_s: 3.6 });
    expect(facts.replanned_nodes).toBeUndefined();
    expect(resumeFacts(fold(h), [NODES[0]!], T(10), 2).replanned_nodes).toBe(1);
  });

  it('a lost node that beats again is recovered once and may serve as a spare', () => {
    const h: RunEvent[] = [...running(), ...decideNodeFailure(fold(running()), lost(), SETTINGS)];
    const back = decideNodeRecovered(fold(h), NODES[1]!, T(30), T(6.4));
    expect(back.map((e) => e.type)).toEqual(['NodeRecovered']);
    const after = fold([...h, ...back]);
    expect(after.excludedNodes).toEqual([]);
    expect(decideNodeRecovered(after, NODES[1]!, T(31), null)).toEqual([]);
  });

  it('a crash the agent reports is detected when received, and its GPU fault keeps the node out', () => {
    const fail = decideTaskReport(fold(running()), { type: 'fail', task_id: T1, node_id: NODES[1]!, body: { attempt: 1, seq: 1, kind: 'gpu_fault', reason: 'xid 79' } }, T(3));
    const state = fold([...running(), ...fail.events]);
    expect(fail.events[0]!.data).toMatchObject({ detected_at: T(3).toISOString() });
    expect(state.excludedNodes).toEqual([NODES[1]]);
    expect(state.incident).toMatchObject({ kind: 'gpu_fault', detected_at: T(3).toISOString() });
  });
});
