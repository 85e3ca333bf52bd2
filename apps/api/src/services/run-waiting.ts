import { isTerminal, type RunState } from '@ito/contracts';
import { waitingReasons, type WaitingReason } from '@ito/domain';
import { bookingNodeLiveness } from '@ito/runs';
import type { Resources } from '../resources.js';

/** A node is live when heard from within its heartbeat interval times the misses allowed (the monitor's rule). */
function liveSince(res: Resources): Date {
  return new Date(res.now().getTime() - res.agent.heartbeatIntervalS * res.agent.heartbeatMisses * 1000);
}

/** What a run waits for now; reads the booking's nodes only for a run that can still move. */
export async function runWaiting(
  res: Resources,
  tenantId: string,
  run: { state: string; booking_id: string },
  /** The running stage's start-up wait in words (stageWaits), or null. */
  firstStep: string | null = null,
): Promise<WaitingReason[]> {
  const state = run.state as RunState;
  if (isTerminal(state) || state === 'cleaned' || state === 'cleaning_up' || state === 'awaiting_operator') return [];
  const nodes = await bookingNodeLiveness(res.pool, tenantId, run.booking_id, liveSince(res));
  return waitingReasons({ state, nodes, first_step: firstStep });
}

/**
 * The notice `train` answers with when the booking has no live node: the run is accepted (nodes may dial in
 * later) but would otherwise sit in planning without a word.
 */
export async function noLiveNodeNotice(res: Resources, tenantId: string, bookingId: string): Promise<string | null> {
  const nodes = await bookingNodeLiveness(res.pool, tenantId, bookingId, liveSince(res));
  if (!nodes || nodes.live > 0) return null;
  return `no node of booking ${bookingId} is live (0 of ${nodes.needed}): the run waits before its first stage on nodes until their agents dial in (ito-admin node register, then ito-agent on each node)`;
}
