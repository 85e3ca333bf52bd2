import { describe, expect, it } from 'vitest';
import type { StageName } from '@ito/contracts';
import {
  decideNodeFailure,
  decideStageStart,
  foldRun,
  keepGlobalBatch,
  type FreeNode,
  type LivePlan,
  type RunAggregate,
  type RunEvent,
  type StageStartDecision,
  type StageStartFacts,
} from '@ito/domain';
import { SETTINGS, T, lostFinding } from './support/monitor-fixtures.js';
import { NODES, PLAN, RUN, exampleManifest, pipelineFor, planned, started } from './support/run-history.js';

/**
 * Stage start, decided case by case from a run's state and the booking's free live nodes: the plain start, the
 * order a hung node takes, re-plans up and down, waiting, failing, and the starts that are no longer needed.
 */
const [A, B] = NODES as [string, string];
const C = `node_${'c'.repeat(32)}`;
const D = `node_${'d'.repeat(32)}`;
const BOOKING = `bkg_${'3'.repeat(32)}`;
const NOW = T(60);

/** Free nodes in the query's order, each with its own rendezvous endpoint (10.0.0.1 for the first, and so on). */
const free = (...ids: string[]): FreeNode[] => ids.map((node_id, i) => ({ node_id, rendezvous: { addr: `10.0.0.${i + 1}`, port: 29500 + i } }));

function facts(o: Partial<StageStartFacts> = {}): StageStartFacts {
  return { stage: 'pretrain', attempt: 1, freeNodes: free(A, B), booking: { nodes: 2 }, now: NOW, ...o };
}

const started_ = (d: StageStartDecision) => {
  if (d.kind !== 'start') throw new Error(`expected a start, got ${JSON.stringify(d)}`);
  return d;
};
const stageStarted = (events: RunEvent[]) => events.find((e) => e.type === 'StageStarted') as Extract<RunEvent, { type: 'StageStarted' }>;
const tasksOf = (events: RunEvent[]) => stageStarted(events).data.tasks!.map((t) => [t.node_id, t.rank]);

/** Pretrain's first attempt on A and B failed when the monitor found rank 1's node (B) hung or lost: attempt 2 is due. */
function afterFailure(kind: 'hung' | 'lost'): RunAggregate {
  const h = started(planned(), 'pretrain');
  const verdict = kind === 'lost' ? { kind: 'lost' as const, silent_s: 6.4 } : { kind: 'hung' as const, stuck_s: 50, expected_step_s: 10, last_progress_at: T(0) };
  return foldRun([...h, ...decideNodeFailure(foldRun(h), lostFinding({ verdict, detected_at: T(50) }), SETTINGS)]);
}

/** A run whose plan was shrunk to one node (as after a failure with no spare): pretrain is due on that plan. */
function shrunk(pipeline = pipelineFor()): RunAggregate {
  return foldRun([...planned(pipeline), { type: 'PlanComputed', data: { run_id: RUN, plan: { ...PLAN, nodes: 1 } } }]);
}

/** The planner's answer on `nodes` nodes: its own global batch (256), which a re-plan must not keep. */
const plannerPlan = (nodes: number): LivePlan => ({ ...PLAN, nodes, layouts: PLAN.layouts.map((l) => ({ ...l, dp: 8 * nodes, global_batch_sequences: 256 })) });

describe('a plain start: the planned number of nodes, one task per node', () => {
  it('assigns the first attempt to the planned nodes in the given order, rank 0 names the rendezvous, node time counts from now', () => {
    const d = started_(decideStageStart(foldRun(planned()), facts({ freeNodes: free(A, B, C) })));
    expect(d.nodes).toEqual([A, B]);
    expect(d.events.map((e) => e.type)).toEqual(['StageStarted']);
    const s = stageStarted(d.events).data;
    expect(tasksOf(d.events)).toEqual([[A, 0], [B, 1]]);
    expect(s).toMatchObject({ run_id: RUN, stage: 'pretrain', attempt: 1, started_at: NOW.toISOString() });
    expect(s.spec).toMatchObject({ world_size: 2, rendezvous: { master_addr: '10.0.0.1', master_port: 29500 }, start_step: 0 });
  });

  it('a one-node stage (an evaluation) names no rendezvous, and a rank 0 without one leaves it out', () => {
    const h = [...started(planned(), 'pretrain'), { type: 'StageCompleted', data: { run_id: RUN, stage: 'pretrain', attempt: 1 } } as RunEvent];
    const evaluation = started_(decideStageStart(foldRun(h), facts({ stage: 'eval_pretrain', freeNodes: free(C, D) })));
    expect(evaluation.nodes).toEqual([C]);
    expect(stageStarted(evaluation.events).data.spec!.rendezvous).toBeNull();
    const silent = started_(decideStageStart(foldRun(planned()), facts({ freeNodes: [{ node_id: A, rendezvous: null }, ...free(B)] })));
    expect(stageStarted(silent.events).data.spec!.rendezvous).toBeNull();
  });
});

describe('suspect ordering: a node a task of this run hung on comes last', () => {
  it('a spare takes the hung node`s place, and the retry records which node it replaced', () => {
    const state = afterFailure('hung');
    expect(state.suspectNodes).toEqual([B]);
    const d = started_(decideStageStart(state, facts({ attempt: 2, freeNodes: free(A, B, C) })));
    expect(d.nodes).toEqual([A, C]);
    expect(d.events.map((e) => e.type)).toEqual(['RunResumed', 'StageStarted']);
    expect(d.events[0]).toMatchObject({ type: 'RunResumed', data: { attempt: 2, nodes: [A, C], spare_nodes: [C], replaced_nodes: [B], resume_latency_s: 10 } });
    expect(d.events[0]!.data).not.toHaveProperty('replanned_nodes');
  });

  it('with no spare the hung node still serves, after every other node (so it is never rank 0)', () => {
    const d = started_(decideStageStart(afterFailure('hung'), facts({ attempt: 2, freeNodes: free(B, A) })));
    expect(d.nodes).toEqual([A, B]);
    expect(tasksOf(d.events)).toEqual([[A, 0], [B, 1]]);
    // Rank 0 is A, the second node the query gave: its endpoint is the rendezvous.
    expect(stageStarted(d.events).data.spec!.rendezvous).toEqual({ master_addr: '10.0.0.2', master_port: 29501 });
  });
});

describe('re-plan down: a retry with fewer nodes than planned and no spare', () => {
  const state = afterFailure('lost');

  it('asks the planner for a plan on the nodes left', () => {
    expect(decideStageStart(state, facts({ attempt: 2, freeNodes: free(A) }))).toEqual({ kind: 'replan', direction: 'down', nodes: 1 });
  });

  it('starts on the new plan, keeping the global batch the checkpoints were trained with, and records the re-plan', () => {
    const d = started_(decideStageStart(state, facts({ attempt: 2, freeNodes: free(A), replanned: { ok: true, plan: plannerPlan(1) } })));
    expect(d.nodes).toEqual([A]);
    expect(d.events.map((e) => e.type)).toEqual(['PlanComputed', 'RunResumed', 'StageStarted']);
    expect(d.events[0]).toEqual({ type: 'PlanComputed', data: { run_id: RUN, plan: keepGlobalBatch(PLAN, plannerPlan(1)) } });
    expect(d.events[1]).toMatchObject({ data: { nodes: [A], replanned_nodes: 1, replaced_nodes: [B] } });
    // Tasks are built on the new plan: its data parallelism, the old global batch.
    expect(stageStarted(d.events).data.spec).toMatchObject({ world_size: 1, layout: { dp: 8, global_batch_sequences: 512 } });
  });

  it('a plan that no longer fits fails the run with the planner`s code', () => {
    const d = decideStageStart(state, facts({ attempt: 2, freeNodes: free(A), replanned: { ok: false, reason: 'too small', code: 'plan_infeasible' } }));
    const reason = '1 of 2 node(s) left after a failure and the plan no longer fits: too small';
    expect(d).toEqual({ kind: 'fail', reason, events: [{ type: 'RunFailed', data: { run_id: RUN, reason, code: 'plan_infeasible' } }] });
  });
});

describe('re-plan up: a shrunk plan grows back at a new stage once nodes are free again', () => {
  it('asks for a plan on the free nodes, up to the booking`s', () => {
    expect(decideStageStart(shrunk(), facts({ freeNodes: free(A, B, C), booking: { nodes: 2 } }))).toEqual({ kind: 'replan', direction: 'up', nodes: 2 });
    expect(decideStageStart(shrunk(), facts({ freeNodes: free(A, B), booking: { nodes: 4 } }))).toEqual({ kind: 'replan', direction: 'up', nodes: 2 });
  });

  it('starts on the grown plan, on as many nodes as it holds', () => {
    const d = started_(decideStageStart(shrunk(), facts({ freeNodes: free(A, B, C), replanned: { ok: true, plan: plannerPlan(2) } })));
    expect(d.nodes).toEqual([A, B]);
    expect(d.events.map((e) => e.type)).toEqual(['PlanComputed', 'StageStarted']);
    expect(d.events[0]).toMatchObject({ data: { plan: { nodes: 2, layouts: [{ global_batch_sequences: 512 }, { global_batch_sequences: 64 }] } } });
  });

  it('the planner refusing leaves the shrunk plan: the stage starts on it, the run goes on', () => {
    const d = started_(decideStageStart(shrunk(), facts({ freeNodes: free(A, B, C), replanned: { ok: false, reason: 'no', code: 'plan_infeasible' } })));
    expect(d.nodes).toEqual([A]);
    expect(d.events.map((e) => e.type)).toEqual(['StageStarted']);
  });

  it('a post-training stage grows back as a training stage does', () => {
    const state = shrunk(pipelineFor(exampleManifest((m) => void (m.target.curriculum = ['post_training']))));
    expect(decideStageStart(state, facts({ stage: 'sft', freeNodes: free(A, B) }))).toEqual({ kind: 'replan', direction: 'up', nodes: 2 });
  });

  it('nothing grows when no more nodes are free, the plan holds the booking`s, the booking is gone, the stage is an evaluation or a retry', () => {
    const at = (state: RunAggregate, o: Partial<StageStartFacts>) => started_(decideStageStart(state, facts({ freeNodes: free(A, B, C), ...o }))).nodes;
    expect(at(shrunk(), { freeNodes: free(A) })).toEqual([A]);
    expect(at(shrunk(), { booking: { nodes: 1 } })).toEqual([A]);
    expect(at(shrunk(), { booking: null })).toEqual([A]);
    expect(at(foldRun(planned()), { booking: { nodes: 2 } })).toEqual([A, B]);
    const evaluated = foldRun([...started(planned(), 'pretrain'), { type: 'StageCompleted', data: { run_id: RUN, stage: 'pretrain', attempt: 1 } }]);
    expect(at({ ...evaluated, plan: { ...PLAN, nodes: 1 } }, { stage: 'eval_pretrain' })).toEqual([A]);
    expect(at({ ...afterFailure('lost'), plan: { ...PLAN, nodes: 1 } }, { attempt: 2 })).toEqual([A]);
  });
});

describe('wait: too few free live nodes for now', () => {
  const reason = (n: number, stage: StageName = 'pretrain', wanted = 2) => `stage ${stage} needs ${wanted} free live node(s) of booking ${BOOKING}; ${n} available`;

  it('a first attempt waits for the planned nodes, with the reason', () => {
    expect(decideStageStart(foldRun(planned()), facts({ freeNodes: free(A) }))).toEqual({ kind: 'wait', reason: reason(1) });
  });

  it('a retry with no node left waits rather than re-plan on none', () => {
    expect(decideStageStart(afterFailure('lost'), facts({ attempt: 2, freeNodes: [] }))).toEqual({ kind: 'wait', reason: reason(0) });
  });

  it('an evaluation retry waits for its node, and a restart waits for the planned nodes', () => {
    const h = [...started(planned(), 'pretrain'), { type: 'StageCompleted', data: { run_id: RUN, stage: 'pretrain', attempt: 1 } } as RunEvent];
    const evalFailed = foldRun([...started(h, 'eval_pretrain'), { type: 'StageFailed', data: { run_id: RUN, stage: 'eval_pretrain', attempt: 1, reason: 'crash' } }]);
    expect(decideStageStart(evalFailed, facts({ stage: 'eval_pretrain', attempt: 2, freeNodes: [] }))).toEqual({ kind: 'wait', reason: reason(0, 'eval_pretrain', 1) });
    const restart = foldRun([
      ...started(planned(), 'pretrain'),
      { type: 'RestartProposed', data: { run_id: RUN, from_checkpoint_id: null, stage: 'pretrain', reason: 'loss spike' } } as RunEvent,
      { type: 'TasksWithdrawn', data: { run_id: RUN, stage: 'pretrain', attempt: 1, task_ids: [], reason: 'restart' } },
      { type: 'RestartApproved', data: { run_id: RUN, confirmation_ref: `cfm_${'6'.repeat(32)}` } },
    ]);
    expect(decideStageStart(restart, facts({ attempt: 2, freeNodes: free(A) }))).toEqual({ kind: 'wait', reason: reason(1) });
  });
});

describe('not needed: the start is done, or the run cannot go on', () => {
  it('a start already made, a stage not due and an attempt not due start nothing', () => {
    const h = started(planned(), 'pretrain');
    expect(decideStageStart(foldRun(h), facts())).toEqual({ kind: 'not_needed' });
    expect(decideStageStart(foldRun(planned()), facts({ stage: 'mid_train' }))).toEqual({ kind: 'not_needed' });
    expect(decideStageStart(foldRun(planned()), facts({ attempt: 2 }))).toEqual({ kind: 'not_needed' });
  });

  it('a run that is over or being cancelled starts nothing, even with every node free', () => {
    const base = planned();
    const ended: RunEvent[][] = [
      [...base, { type: 'RunFailed', data: { run_id: RUN, reason: 'x' } }],
      [...base, { type: 'CancelRequested', data: { run_id: RUN, confirmation_ref: `cfm_${'6'.repeat(32)}` } }],
      [...base, { type: 'RunCancelled', data: { run_id: RUN, reason: 'x' } }],
    ];
    for (const h of ended) expect(decideStageStart(foldRun(h), facts({ freeNodes: free(A, B, C) }))).toEqual({ kind: 'not_needed' });
  });
});
