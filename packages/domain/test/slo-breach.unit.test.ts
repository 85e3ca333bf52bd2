import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SLO_TARGETS,
  decideNodeFailure,
  decideSloBreaches,
  decideTaskReport,
  incidentRecords,
  judgeLatency,
  nextCommands,
  resumeFacts,
  startStageEvents,
  taskIdFor,
  type NodeFailure,
  type RunEvent,
} from '@ito/domain';
import { NODES, fold, planned, started } from './support/run-history.js';

const SETTINGS = { interval_s: 2, misses: 3, hang_factor: 5, first_step_max_s: 600 };
const TARGETS = { detection_s: 10, resume_s: 60 };
const T = (s: number) => new Date(Date.UTC(2026, 11, 3, 12, 0, 0) + s * 1000);
const T1 = taskIdFor(fold(planned()).runId!, 'pretrain', 1, 1);
const running = () => started(planned(), 'pretrain');

/** A node silent since T(0), found lost at T(detectedAt). */
function lostAt(detectedAt: number): NodeFailure {
  return { node_id: NODES[1]!, task_id: T1, attempt: 1, verdict: { kind: 'lost', silent_s: detectedAt }, last_heartbeat_at: T(0), step: null, detected_at: T(detectedAt) };
}

/** The run after a loss detected at T(detectedAt), and the events the resume at T(resumedAt) appends. */
function resumedAfter(detectedAt: number, resumedAt: number): { history: RunEvent[]; resume: RunEvent[] } {
  const found = decideNodeFailure(fold(running()), lostAt(detectedAt), SETTINGS);
  const history = [...running(), ...found, ...decideSloBreaches(fold(running()), found, TARGETS)];
  const state = fold(history);
  const cmd = nextCommands(state).find((c) => c.type === 'StartStage');
  if (!cmd || cmd.type !== 'StartStage') throw new Error('a retry must be next');
  const facts = resumeFacts(state, [NODES[0]!], T(resumedAt), 2);
  return { history, resume: startStageEvents(state, cmd, null, { facts }) };
}

const breaches = (events: RunEvent[]) => events.filter((e) => e.type === 'SloBreached').map((e) => e.data);

describe('SLO breaches', () => {
  it('the configured defaults are 10 s to detect and 60 s to resume', () => {
    expect(DEFAULT_SLO_TARGETS).toEqual(TARGETS);
  });

  it('detection: a loss found exactly at the target is met, a millisecond later is a breach of the target', () => {
    expect(decideSloBreaches(fold(running()), decideNodeFailure(fold(running()), lostAt(10), SETTINGS), TARGETS)).toEqual([]);
    const late = decideSloBreaches(fold(running()), decideNodeFailure(fold(running()), lostAt(10.001), SETTINGS), TARGETS);
    expect(breaches(late)).toEqual([
      { run_id: fold(running()).runId, incident_kind: 'node_lost', node_id: NODES[1], detected_at: T(10.001).toISOString(), slo: 'detection', measured_s: 10.001, target_s: 10, bound: 'target' },
    ]);
  });

  it('detection: reaching the seed`s 10 minutes is a breach of the seed`s bound', () => {
    expect(judgeLatency('detection', 599.999, TARGETS)).toEqual({ slo: 'detection', measured_s: 599.999, target_s: 10, bound: 'target' });
    expect(judgeLatency('detection', 600, TARGETS)).toEqual({ slo: 'detection', measured_s: 600, target_s: 600, bound: 'seed' });
    // A looser target still breaks the seed bound at 600 s.
    expect(judgeLatency('detection', 600, { detection_s: 600, resume_s: 900 })).toMatchObject({ bound: 'seed' });
    expect(judgeLatency('detection', 599, { detection_s: 600, resume_s: 900 })).toBeNull();
  });

  it('resume: exactly at the target is met, above it a breach; at 15 minutes a breach of the seed`s bound', () => {
    const met = resumedAfter(4, 64);
    expect(breaches(decideSloBreaches(fold(met.history), met.resume, TARGETS))).toEqual([]);
    const late = resumedAfter(4, 64.5);
    expect(breaches(decideSloBreaches(fold(late.history), late.resume, TARGETS))).toEqual([
      { run_id: fold(running()).runId, incident_kind: 'node_lost', node_id: NODES[1], detected_at: T(4).toISOString(), slo: 'resume', measured_s: 60.5, target_s: 60, bound: 'target' },
    ]);
    expect(judgeLatency('resume', 899.999, TARGETS)).toMatchObject({ bound: 'target', target_s: 60 });
    expect(judgeLatency('resume', 900, TARGETS)).toEqual({ slo: 'resume', measured_s: 900, target_s: 900, bound: 'seed' });
  });

  it('a breach is recorded once: a later failure of the same attempt or a replayed decision adds none', () => {
    const found = decideNodeFailure(fold(running()), lostAt(30), SETTINGS);
    const first = decideSloBreaches(fold(running()), found, TARGETS);
    expect(breaches(first)).toHaveLength(1);
    const after = fold([...running(), ...found, ...first]);
    // The other node's report of the failed attempt is fenced off; a second finding appends nothing to judge.
    expect(decideSloBreaches(after, decideNodeFailure(after, { ...lostAt(40), node_id: NODES[0]!, task_id: taskIdFor(after.runId!, 'pretrain', 1, 0) }, SETTINGS), TARGETS)).toEqual([]);
    // The breach event itself opens nothing.
    expect(decideSloBreaches(fold([...running(), ...found]), first, TARGETS)).toEqual([]);
    // A resume with no incident (an approved restart) has no latency to judge.
    expect(decideSloBreaches(after, [{ type: 'RunResumed', data: { run_id: after.runId!, from_checkpoint_id: null } }], TARGETS)).toEqual([]);
  });

  it('a crash the agent reports is detected when received: detection latency 0, never a breach', () => {
    const fail = decideTaskReport(fold(running()), { type: 'fail', task_id: T1, node_id: NODES[1]!, body: { attempt: 1, seq: 1, kind: 'crash', reason: 'exit 1' } }, T(3));
    expect(decideSloBreaches(fold(running()), fail.events, { detection_s: 0.001, resume_s: 1 })).toEqual([]);
  });
});

describe('incident records', () => {
  it('one per incident: resumed ones with their recorded latencies and breaches, then the open one', () => {
    const late = resumedAfter(4, 64.5);
    const history = [...late.history, ...late.resume, ...decideSloBreaches(fold(late.history), late.resume, TARGETS)];
    expect(incidentRecords(history)).toEqual([
      { kind: 'node_lost', node_id: NODES[1], detected_at: T(4).toISOString(), detection_latency_s: 4, resume_latency_s: 60.5, breaches: [{ slo: 'resume', measured_s: 60.5, target_s: 60, bound: 'target' }] },
    ]);
    // An incident still open: a loss detected 12 s after the last beat, no resume yet.
    const found = decideNodeFailure(fold(running()), { ...lostAt(12) }, SETTINGS);
    const open = [...running(), ...found, ...decideSloBreaches(fold(running()), found, TARGETS)];
    expect(incidentRecords(open)).toEqual([
      { kind: 'node_lost', node_id: NODES[1], detected_at: T(12).toISOString(), detection_latency_s: 12, resume_latency_s: null, breaches: [{ slo: 'detection', measured_s: 12, target_s: 10, bound: 'target' }] },
    ]);
  });
});
