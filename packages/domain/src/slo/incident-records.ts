import type { IncidentFacts, RunEvent, RunEventMap } from '../run/run-events.js';
import { evolveRun, initialRunState } from '../run/run-state.js';
import { detectionLatencyS } from './slo-breach.js';

/** One incident of a run as its metrics show it: what failed where, when, how fast, and the SLOs it missed. */
export interface IncidentRecord {
  kind: IncidentFacts['kind'];
  node_id: string;
  detected_at: string;
  detection_latency_s: number | null;
  /** Null while the run has not resumed from it. */
  resume_latency_s: number | null;
  breaches: Array<Pick<RunEventMap['SloBreached'], 'slo' | 'measured_s' | 'target_s' | 'bound'>>;
}

const sameIncident = (a: { node_id: string; detected_at: string }, b: { node_id: string; detected_at: string }) => a.node_id === b.node_id && a.detected_at === b.detected_at;

/**
 * The run's incidents in the order they were detected: each one a RunResumed closed, with its recorded
 * latencies, then the one the run is still recovering from (no resume latency yet). Breaches join their incident
 * by node and detection time. Pure: folds the run's events.
 */
export function incidentRecords(events: readonly RunEvent[]): IncidentRecord[] {
  const records: IncidentRecord[] = [];
  const breaches: Array<RunEventMap['SloBreached']> = [];
  let state = initialRunState();
  for (const e of events) {
    state = evolveRun(state, e);
    if (e.type === 'SloBreached') breaches.push(e.data);
    if (e.type === 'RunResumed' && e.data.incident) {
      const i = e.data.incident;
      records.push({ kind: i.kind, node_id: i.node_id, detected_at: i.detected_at, detection_latency_s: e.data.detection_latency_s ?? null, resume_latency_s: e.data.resume_latency_s ?? null, breaches: [] });
    }
  }
  const open = state.incident;
  if (open) {
    records.push({ kind: open.kind, node_id: open.node_id, detected_at: open.detected_at, detection_latency_s: detectionLatencyS(open), resume_latency_s: null, breaches: [] });
  }
  for (const r of records) r.breaches = breaches.filter((b) => sameIncident(b, r)).map(({ slo, measured_s, target_s, bound }) => ({ slo, measured_s, target_s, bound }));
  return records;
}
