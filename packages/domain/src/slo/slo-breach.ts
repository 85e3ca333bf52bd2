import type { IncidentFacts, RunEvent, RunEventMap, SLO_NAMES } from '../run/run-events.js';
import { evolveRun, type RunAggregate } from '../run/run-state.js';

export type SloName = (typeof SLO_NAMES)[number];

/** The operator's targets, in seconds (ITO_SLO_DETECTION_TARGET_S, ITO_SLO_RESUME_TARGET_S). */
export interface SloTargets {
  detection_s: number;
  resume_s: number;
}

export const DEFAULT_SLO_TARGETS: SloTargets = { detection_s: 10, resume_s: 60 };

/** The seed's hard bounds: a failure is detected in under 10 minutes and training resumes in under 15. */
export const SEED_SLO_BOUNDS: Readonly<SloTargets> = { detection_s: 600, resume_s: 900 };

/**
 * Whether one measured latency breached its SLO, and which bound it broke. The configured target is met at or
 * below it; the seed's bound is strict ("under 10 minutes"), so reaching it is a breach. A latency past the seed's
 * bound is reported against that bound (the graver of the two), otherwise against the target. Null: met.
 */
export function judgeLatency(slo: SloName, measuredS: number, targets: SloTargets): Pick<RunEventMap['SloBreached'], 'slo' | 'measured_s' | 'target_s' | 'bound'> | null {
  const seed = slo === 'detection' ? SEED_SLO_BOUNDS.detection_s : SEED_SLO_BOUNDS.resume_s;
  const target = slo === 'detection' ? targets.detection_s : targets.resume_s;
  if (!Number.isFinite(measuredS)) return null;
  if (measuredS >= seed) return { slo, measured_s: measuredS, target_s: seed, bound: 'seed' };
  if (measuredS > target) return { slo, measured_s: measuredS, target_s: target, bound: 'target' };
  return null;
}

/** Seconds from an incident's last good evidence to its detection; null when there was no evidence to measure from. */
export function detectionLatencyS(incident: Pick<IncidentFacts, 'evidence_at' | 'detected_at'>): number | null {
  if (!incident.evidence_at) return null;
  const ms = Date.parse(incident.detected_at) - Date.parse(incident.evidence_at);
  return Number.isFinite(ms) ? Math.max(0, ms / 1000) : null;
}

function breachEvent(runId: string, incident: IncidentFacts, judged: NonNullable<ReturnType<typeof judgeLatency>>): RunEvent {
  return {
    type: 'SloBreached',
    data: { run_id: runId, incident_kind: incident.kind, node_id: incident.node_id, detected_at: incident.detected_at, ...judged },
  };
}

/**
 * The SLO breaches revealed by events about to be appended to a run, as `SloBreached` events to append with
 * them (same transaction). Detection is judged when an event opens an incident (the run had none and now has
 * one: NodeLost, TaskHung, or an agent's TaskFailed); resume is judged on the RunResumed that closes it, from its
 * `resume_latency_s`. Each incident is opened and closed once, so each breach is found once; a redelivered job
 * that appends nothing finds nothing. Pure.
 */
export function decideSloBreaches(state: RunAggregate, events: readonly RunEvent[], targets: SloTargets): RunEvent[] {
  const breaches: RunEvent[] = [];
  let s = state;
  for (const e of events) {
    const before = s.incident ?? null;
    s = evolveRun(s, e);
    const runId = s.runId;
    if (!runId) continue;
    const opened = before === null ? (s.incident ?? null) : null;
    if (opened) {
      const latency = detectionLatencyS(opened);
      const judged = latency === null ? null : judgeLatency('detection', latency, targets);
      if (judged) breaches.push(breachEvent(runId, opened, judged));
    }
    if (e.type === 'RunResumed' && e.data.incident && e.data.resume_latency_s !== undefined) {
      const judged = judgeLatency('resume', e.data.resume_latency_s, targets);
      if (judged) breaches.push(breachEvent(runId, e.data.incident, judged));
    }
  }
  return breaches;
}
