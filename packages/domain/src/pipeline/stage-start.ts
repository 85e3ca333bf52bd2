import { stageKind, type Rendezvous, type StageName, type TaskSpec } from '@ito/contracts';
import { resumeFacts } from '../monitor/resume-facts.js';
import type { LivePlan, RunEvent } from '../run/run-events.js';
import { evolveRun, type RunAggregate } from '../run/run-state.js';
import { failRunEvents, planComputedEvent, startStageEvents, stillNeeded } from './command-events.js';
import { rolloutNodesFor } from './rollout-exchange.js';
import { assignTasks, buildStageSpec, nodesFor } from './task-spec.js';

/** A free, live node of the run's booking, as the node query gives it (the run's excluded nodes already left out). */
export interface FreeNode {
  node_id: string;
  rendezvous: Rendezvous | null;
}

/** The planner's answer for the booking on a given number of nodes. */
export type ReplanOutcome = { ok: true; plan: LivePlan } | { ok: false; reason: string; code: string };

/** What a node stage's start is decided on, besides the run's state; the handler reads it all, the decider does no I/O. */
export interface StageStartFacts {
  stage: StageName;
  attempt: number;
  /** The booking's free live nodes, in the query's order. */
  freeNodes: readonly FreeNode[];
  /** The booking as it is now; null when it is no longer on record. */
  booking: { nodes: number } | null;
  now: Date;
  /** The planner's answer to the `replan` an earlier call on the same facts asked for. */
  replanned?: ReplanOutcome;
}

/**
 * What starting a node stage's attempt comes to:
 * - `not_needed`: the run no longer needs this start (it was done, the run moved on, or the run is over);
 * - `replan`: ask the planner for a plan on `nodes` nodes, then decide again with its answer as `replanned`
 *   (`up` when nodes came back to a shrunk plan, `down` when a retry has fewer nodes than planned);
 * - `wait`: too few free live nodes for now; the job retries later;
 * - `fail`: the stage can never start (a retry with too few nodes, on which the plan no longer fits);
 * - `start`: the events that start the attempt on `nodes`.
 */
export type StageStartDecision =
  | { kind: 'not_needed' }
  | { kind: 'replan'; direction: 'up' | 'down'; nodes: number }
  | { kind: 'wait'; reason: string }
  | { kind: 'fail'; reason: string; events: RunEvent[] }
  | { kind: 'start'; nodes: string[]; events: RunEvent[] };

/**
 * The free nodes in the order they are given tasks: nodes a task of this run hung on come after every other, so
 * a spare replaces them first and they serve only when needed.
 */
export function orderBySuspicion(state: RunAggregate, free: readonly FreeNode[]): FreeNode[] {
  const suspects = state.suspectNodes;
  return [...free.filter((n) => !suspects.includes(n.node_id)), ...free.filter((n) => suspects.includes(n.node_id))];
}

/**
 * The planner's new layout, keeping the global batch of the plan the checkpoints were trained with, so a step
 * means the same tokens before and after a re-plan (gradient accumulation takes up the difference).
 */
export function keepGlobalBatch(before: LivePlan | null, plan: LivePlan): LivePlan {
  const layouts = plan.layouts.map((l) => {
    const old = before?.layouts.find((o) => o.sequence_length === l.sequence_length);
    return old ? { ...l, global_batch_sequences: old.global_batch_sequences } : l;
  });
  return { ...plan, layouts };
}

/**
 * Decides the start of a node stage's attempt (training, evaluation, ladder, post-training) from the run's
 * state and the booking's free live nodes. Pure: the handler reads the facts, asks the planner when told to
 * (`replan`), and appends what this answers.
 */
export function decideStageStart(state: RunAggregate, facts: StageStartFacts): StageStartDecision {
  const { stage, attempt, replanned } = facts;
  const cmd = stillNeeded(state, 'StartStage', `${stage}@${attempt}`);
  if (!cmd) return { kind: 'not_needed' };
  const kind = stageKind(stage);
  const wanted = nodesFor(state, stage);
  const nodes = orderBySuspicion(state, facts.freeNodes);
  let plan: LivePlan | undefined;
  if (nodes.length > wanted && !cmd.resume && (kind === 'train' || kind === 'post_train')) {
    // A plan shrunk after a failure grows back at the next stage once nodes are free again (a lost node came
    // back, a spare was registered), up to the booking's nodes: the rest of the run goes at the planned pace.
    // Should the planner refuse, the stage starts on the plan it has.
    const booked = facts.booking?.nodes ?? wanted;
    if (wanted < booked) {
      if (!replanned) return { kind: 'replan', direction: 'up', nodes: Math.min(nodes.length, booked) };
      if (replanned.ok) plan = keepGlobalBatch(state.plan, replanned.plan);
    }
  } else if (nodes.length < wanted) {
    // A retry after a failure with no spare left: re-plan on the nodes that remain rather than wait for one. A
    // one-node stage (an evaluation, a ladder proxy) has none left to re-plan on, so it waits as well.
    if (!cmd.resume || cmd.resume.reason !== 'retry' || nodes.length === 0) {
      return { kind: 'wait', reason: `stage ${stage} needs ${wanted} free live node(s) of booking ${state.bookingId}; ${nodes.length} available` };
    }
    if (!replanned) return { kind: 'replan', direction: 'down', nodes: nodes.length };
    if (!replanned.ok) {
      const reason = `${nodes.length} of ${wanted} node(s) left after a failure and the plan no longer fits: ${replanned.reason}`;
      return { kind: 'fail', reason, events: failRunEvents(state, reason, replanned.code) };
    }
    plan = keepGlobalBatch(state.plan, replanned.plan);
  }

  const chosen = nodes.slice(0, plan?.nodes ?? wanted);
  const nodeIds = chosen.map((n) => n.node_id);
  const planned = plan ? evolveRun(state, planComputedEvent(state, plan)) : state;
  const spec = { ...buildStageSpec(planned, stage, attempt, cmd.resume, nodeIds.length), rendezvous: rendezvousOf(chosen) };
  const tasks = assignTasks(spec.run_id, stage, attempt, nodeIds, rolloutNodesFor(planned, stage, nodeIds.length));
  // The resume facts are recorded only when the attempt resumes; the plan only when there is a new one.
  const events = startStageEvents(state, cmd, { tasks, spec }, { facts: resumeFacts(state, nodeIds, facts.now, wanted), plan, startedAt: facts.now });
  return { kind: 'start', nodes: nodeIds, events };
}

/** Rank 0's endpoint when the attempt spans nodes (its peers dial it); one node needs none. */
function rendezvousOf(chosen: ReadonlyArray<{ rendezvous: Rendezvous | null }>): TaskSpec['rendezvous'] {
  const rank0 = chosen[0]?.rendezvous;
  return chosen.length > 1 && rank0 ? { master_addr: rank0.addr, master_port: rank0.port } : null;
}
