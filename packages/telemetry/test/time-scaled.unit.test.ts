import { describe, expect, it } from 'vitest';
import { groupFigures, runTelemetryOf, timeScaledUnitsOf, unitsOf, type BookingFacts, type Segment, type TelemetryEvent } from '../src/index.js';
import { DEMO_BOOKING_ID, DEMO_RUN_EVENTS, DEMO_RUN_ID } from './support/demo-history.js';

const HOUR = 3_600_000;
const booking: BookingFacts = {
  booking_id: DEMO_BOOKING_ID,
  region: 'us-east-1',
  fabric: 'infiniband',
  gpu: 'h200',
  nodes: 2,
  gpus_per_node: 8,
  rate_usd_per_gpu_hour: 2.5,
  term_start: DEMO_RUN_EVENTS[0]!.at - HOUR,
  term_end: DEMO_RUN_EVENTS[0]!.at + 30 * 24 * HOUR,
};

function hoursByLabel(segments: Segment[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [s, e, l] of segments) out[l] = (out[l] ?? 0) + (e - s) / HOUR;
  return out;
}

describe("the demo's run (simulated executor, 10,000 modelled seconds per wall second, one node pulled)", () => {
  const run = runTelemetryOf(DEMO_RUN_ID, DEMO_RUN_EVENTS);

  it('is time-scaled: its 37 wall seconds are accounted as the ~95 hours the executor modelled', () => {
    expect(run.clock.time_scaled).toBe(true);
    expect((run.ended_at! - run.started_at!) / 1000).toBeLessThan(40);
    const span = (run.clock.clock_at! - run.started_at!) / HOUR;
    expect(span).toBeGreaterThan(80);
    expect(span).toBeLessThan(110);
    // The segments cover the run's clock end to end, with no gap and no overlap.
    for (let i = 1; i < run.segments.length; i++) expect(run.segments[i]![0]).toBe(run.segments[i - 1]![1]);
    expect(run.segments.at(-1)![1]).toBe(run.clock.clock_at);
  });

  it("keeps the control plane's latencies at their wall length: 6.2 s to detect, 41 ms to resume", () => {
    expect(run.interruptions).toEqual([{ cause: 'node_lost', at: DEMO_RUN_EVENTS.find((e) => e.type === 'NodeLost')!.at, detection_ms: 6212, resume_ms: 41 }]);
    expect(hoursByLabel(run.segments).infrastructure_recovery! * 3600).toBeCloseTo(6.253, 1);
  });

  it('reads as a desk analyst would expect: goodput well above 0.5, a price near the rate ÷ goodput', () => {
    const [fig] = groupFigures(timeScaledUnitsOf([booking], [run]), ['run']);
    expect(fig!.group).toEqual({ run: DEMO_RUN_ID });
    expect(fig!.goodput).toBeGreaterThan(0.9);
    expect(fig!.goodput).toBeLessThan(1);
    expect(fig!.effective_usd_per_productive_gpu_hour).toBeCloseTo(2.5 / fig!.goodput!, 6);
    expect(fig!.effective_usd_per_productive_gpu_hour).toBeLessThan(3);
    expect(fig!.interruptions.total).toBe(1);
    // Productive plus every cause is the run's span on its clock, exactly.
    const causes = Object.values(fig!.badput_by_cause_node_ms).reduce((a, b) => a + b, 0);
    expect(fig!.productive_node_ms + causes).toBe(fig!.booked_node_ms);
    expect(fig!.badput_by_cause_node_ms.idle).toBe(0);
  });

  it('counts each later stage from its own step 1: sft, dpo and rlvr are not measured against pretraining\'s steps', () => {
    // Before, every step of a later stage at or below pretraining's 2,549 read as recomputed (24.8 h "wasted").
    expect(hoursByLabel(run.segments).wasted_progress ?? 0).toBeLessThan(1);
  });

  it('gives no unit for a run that never started', () => {
    expect(timeScaledUnitsOf([booking], [runTelemetryOf('run_x', [])])).toEqual([]);
  });
});

describe('a run whose executor keeps pace with the ledger', () => {
  const T = Date.parse('2026-11-02T00:00:00Z');
  const r = { run_id: 'run_w' };
  const events: TelemetryEvent[] = [
    { type: 'RunReserved', data: { ...r, booking_id: DEMO_BOOKING_ID }, at: T },
    { type: 'StageStarted', data: { ...r, stage: 'pretrain', attempt: 1 }, at: T + 10_000 },
    { type: 'ProgressRecorded', data: { ...r, stage: 'pretrain', attempt: 1, step: 1, elapsed_s: 50 }, at: T + 60_000 },
    // Two reports the agent sent together after a network stall: 100 s of training recorded 5 ms apart.
    { type: 'ProgressRecorded', data: { ...r, stage: 'pretrain', attempt: 1, step: 2, elapsed_s: 150 }, at: T + 160_000 },
    { type: 'ProgressRecorded', data: { ...r, stage: 'pretrain', attempt: 1, step: 3, elapsed_s: 250 }, at: T + 160_005 },
    { type: 'RunSucceeded', data: { ...r }, at: T + 170_000 },
  ];
  it('stays on the wall clock, even when reports arrive bunched together', () => {
    const run = runTelemetryOf('run_w', events);
    expect(run.clock.time_scaled).toBe(false);
    expect(run.segments.at(-1)![1]).toBe(T + 170_000);
    expect(hoursByLabel(run.segments).productive! * 3600).toBe(110);
    expect(timeScaledUnitsOf([booking], [run])).toEqual([]);
    expect(unitsOf([booking], [run], { from: T, to: T + 1_000_000 }, true)[0]!.booked_node_ms).toBe(170_000 * 2);
  });
});
