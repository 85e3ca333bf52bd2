import type { RunState } from '@ito/contracts';

/**
 * What a run is waiting for, in words a person reads in `ito status`. A union keyed on `reason`: a new kind of
 * wait is a new member, a new fact in `WaitingFacts` and one more check in `waitingReasons`.
 */
export type WaitingReason =
  | { reason: 'nodes'; live: number; needed: number; message: string }
  /** A training task of the running stage has reached no step yet, within its start-up allowance. */
  | { reason: 'first_step'; waiting_for: string; message: string };

export interface WaitingFacts {
  state: RunState;
  /** The booking's nodes heard from within the liveness window, and how many the run's stages need. */
  nodes: { live: number; needed: number } | null;
  /**
   * The running stage's start-up wait in words ("first step on node gpu-01 (allowance 300 s, 12 s so far)"), the
   * same the run view answers as `waiting_for`; null or absent when no task waits for its first step.
   */
  first_step?: string | null;
}

/** States before the first stage on nodes: that stage cannot start until enough of the booking's nodes are live. */
const BEFORE_NODE_STAGES: readonly RunState[] = ['reserved', 'confirmed', 'preparing_data', 'planning'];
/** States with work on nodes: a stage can go on with fewer nodes after a loss, never with none. */
const ON_NODES: readonly RunState[] = ['training', 'recovering', 'evaluating', 'post_training'];

export function nodesWaitMessage(live: number, needed: number): string {
  return `waiting for nodes: ${live} of ${needed} live`;
}

/** Pure: the reasons a run cannot make progress right now, most blocking first; empty when nothing blocks it. */
export function waitingReasons(facts: WaitingFacts): WaitingReason[] {
  const reasons: WaitingReason[] = [];
  const nodes = facts.nodes;
  if (nodes) {
    const short = BEFORE_NODE_STAGES.includes(facts.state) ? nodes.live < nodes.needed : ON_NODES.includes(facts.state) && nodes.live === 0;
    if (short) reasons.push({ reason: 'nodes', live: nodes.live, needed: nodes.needed, message: nodesWaitMessage(nodes.live, nodes.needed) });
  }
  if (facts.first_step && ON_NODES.includes(facts.state)) reasons.push({ reason: 'first_step', waiting_for: facts.first_step, message: `waiting for ${facts.first_step}` });
  return reasons;
}
