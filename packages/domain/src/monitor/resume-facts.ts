import type { RunEventMap } from '../run/run-events.js';
import type { RunAggregate } from '../run/run-state.js';

export type ResumeFacts = Pick<
  RunEventMap['RunResumed'],
  'nodes' | 'spare_nodes' | 'replaced_nodes' | 'replanned_nodes' | 'incident' | 'detection_latency_s' | 'resume_latency_s'
>;

/**
 * What a resumed attempt records beside its checkpoint: the nodes it runs on, which of them are spares (not in
 * the failed attempt), which failed nodes it leaves out, and the incident's detection latency (detected −
 * last good evidence) and resume latency (now − detected). Pure: `now` comes in.
 */
export function resumeFacts(state: RunAggregate, nodeIds: readonly string[], now: Date, plannedNodes: number): ResumeFacts {
  const before = state.current?.tasks.map((t) => t.node_id) ?? [];
  const incident = state.incident ?? null;
  const facts: ResumeFacts = {
    nodes: [...nodeIds],
    spare_nodes: nodeIds.filter((n) => !before.includes(n)),
    replaced_nodes: before.filter((n) => !nodeIds.includes(n)),
    ...(nodeIds.length < plannedNodes ? { replanned_nodes: nodeIds.length } : {}),
  };
  if (!incident) return facts;
  const detected = Date.parse(incident.detected_at);
  const evidence = incident.evidence_at ? Date.parse(incident.evidence_at) : null;
  return {
    ...facts,
    incident,
    ...(evidence !== null ? { detection_latency_s: Math.max(0, (detected - evidence) / 1000) } : {}),
    resume_latency_s: Math.max(0, (now.getTime() - detected) / 1000),
  };
}
