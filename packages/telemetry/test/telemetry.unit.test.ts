import { describe, expect, it } from 'vitest';
import { BADPUT_CAUSES, foldRunTelemetry, emptyRunTelemetry, groupFigures, overlaySegment, percentile, runTelemetryOf, unitsOf, type Segment } from '../src/index.js';
import { BOOKING_ID, BOOKINGS, IDLE_BOOKING_ID, RUN_EVENTS, RUN_ID, T0, at, nodeMs } from './support/known-history.js';

const run = runTelemetryOf(RUN_ID, RUN_EVENTS);
const whole = { from: T0, to: at(2000) };

/** Seconds per label of the run's own segments, summed. */
function secondsByLabel(segments: Segment[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [s, e, l] of segments) out[l] = (out[l] ?? 0) + (e - s) / 1000;
  return out;
}

describe('the run fold, on the known history', () => {
  it('splits the run span (1,410 s) into productive time and badput by cause, as worked out by hand', () => {
    // startup 10 (reserve→data prep) + 10 (planning) + 60 (to the first step) + 20 + 20 (resume to restore)
    // + 10 (restore to the first step) + 20 (approval to sft) + 80 (sft to its first step); productive
    // 100+100+100+130+100; wasted 30 (after the last step until the last heartbeat) + 90 (steps 21..30 again);
    // recovery 470..620.
    expect(secondsByLabel(run.segments)).toEqual({
      program_startup: 230,
      data_prep: 40,
      productive: 530,
      checkpoint_save_stall: 20,
      checkpoint_restore: 10,
      wasted_progress: 120,
      infrastructure_recovery: 150,
      awaiting_operator: 200,
      other: 110,
    });
    expect(run.started_at).toBe(at(100));
    expect(run.ended_at).toBe(at(1510));
  });

  it('counts the lost node and its task crash as one interruption, with detection and resume latency', () => {
    expect(run.interruptions).toEqual([{ cause: 'node_lost', at: at(500), detection_ms: 30_000, resume_ms: 120_000 }]);
  });

  it('keeps every save and restore with its bytes and duration (the asynchronous one stalls nothing)', () => {
    expect(run.checkpoints).toEqual([
      { kind: 'save', at: at(340), bytes: 8e9, ms: 20_000 },
      { kind: 'restore', at: at(670), bytes: 8e9, ms: 10_000 },
      { kind: 'save', at: at(900), bytes: 8e9, ms: 10_000 },
    ]);
  });

  it('is pure: folding one event at a time gives the same state and leaves the previous one untouched', () => {
    let s = emptyRunTelemetry(RUN_ID);
    const snapshots: string[] = [];
    for (const e of RUN_EVENTS) {
      const before = JSON.stringify(s);
      const next = foldRunTelemetry(s, e);
      expect(JSON.stringify(s)).toBe(before);
      snapshots.push(before);
      s = next;
    }
    expect(s).toEqual(run);
  });

  it('ignores events of unknown shape and tolerates fields it does not know', () => {
    const noisy = RUN_EVENTS.flatMap((e) => [e, { type: 'ProgressRecorded', data: { run_id: RUN_ID, stage: 'eval_pretrain', step: 'x' }, at: e.at }]);
    expect(secondsByLabel(runTelemetryOf(RUN_ID, noisy).segments).productive).toBe(530);
  });
});

describe('figures over a window', () => {
  it('per booking: booked 4,000 node-s, goodput 0.265, causes summing exactly to the badput, price = rate ÷ goodput', () => {
    const [busy, idle] = groupFigures(unitsOf(BOOKINGS, [run], whole, false), ['booking']);
    expect(busy!.group).toEqual({ booking: BOOKING_ID });
    expect(busy!.booked_node_ms).toBe(nodeMs(2000));
    expect(busy!.productive_node_ms).toBe(nodeMs(530));
    expect(busy!.badput_by_cause_node_ms).toEqual({
      program_startup: nodeMs(230),
      data_prep: nodeMs(40),
      checkpoint_save_stall: nodeMs(20),
      checkpoint_restore: nodeMs(10),
      wasted_progress: nodeMs(120),
      infrastructure_recovery: nodeMs(150),
      awaiting_operator: nodeMs(200),
      idle: nodeMs(590),
      other: nodeMs(110),
    });
    const causes = BADPUT_CAUSES.reduce((n, c) => n + busy!.badput_by_cause_node_ms[c], 0);
    expect(causes).toBe(busy!.badput_node_ms);
    expect(busy!.productive_node_ms + busy!.badput_node_ms).toBe(busy!.booked_node_ms);
    expect(busy!.goodput).toBe(0.265);
    // One interruption in 4,000 node-seconds: 1 × 1,000 × 3,600 / 4,000 = 900 per 1,000 node-hours.
    expect(busy!.interruption_rate_per_1k_node_hours).toEqual({ node_lost: 900, hang: 0, crash: 0, gpu_fault: 0, total: 900 });
    expect(busy!.checkpoint_save_bandwidth_bytes_per_s).toEqual({ count: 2, p50: 4e8, p95: 8e8 });
    expect(busy!.checkpoint_restore_bandwidth_bytes_per_s).toEqual({ count: 1, p50: 8e8, p95: 8e8 });
    expect(busy!.detection_latency_ms).toEqual({ count: 1, p50: 30_000, p95: 30_000 });
    expect(busy!.resume_latency_ms).toEqual({ count: 1, p50: 120_000, p95: 120_000 });
    // 16 GPUs × 4,000/3,600 h × $2.5 = $44.44; productive GPU-hours 8 × 1,060/3,600.
    expect(busy!.booked_usd).toBeCloseTo((2.5 * 16 * 2000) / 3600, 9);
    expect(busy!.effective_usd_per_productive_gpu_hour).toBeCloseTo(2.5 / 0.265, 9);
    expect(idle!.group).toEqual({ booking: IDLE_BOOKING_ID });
    expect(idle!.goodput).toBe(0);
    expect(idle!.badput_by_cause_node_ms.idle).toBe(1_000_000);
    expect(idle!.effective_usd_per_productive_gpu_hour).toBeNull();
  });

  it('per run: the run span is the booked time, so nothing is idle', () => {
    const [only] = groupFigures(unitsOf(BOOKINGS, [run], whole, true), ['run']);
    expect(only!.group).toEqual({ run: RUN_ID });
    expect(only!.booked_node_ms).toBe(nodeMs(1410));
    expect(only!.badput_by_cause_node_ms.idle).toBe(0);
    expect(only!.goodput).toBe(1060 / 2820);
  });

  it('clips every segment to the window [300 s, 800 s)', () => {
    const [busy] = groupFigures(unitsOf(BOOKINGS.slice(0, 1), [run], { from: at(300), to: at(800) }, false), ['region', 'fabric', 'gpu']);
    expect(busy!.group).toEqual({ region: 'us-east-1', fabric: 'infiniband', gpu: 'h100' });
    expect(busy!.booked_node_ms).toBe(nodeMs(500));
    expect(busy!.productive_node_ms).toBe(nodeMs(20 + 100 + 30));
    expect(busy!.badput_by_cause_node_ms).toMatchObject({ checkpoint_save_stall: nodeMs(20), wasted_progress: nodeMs(120), infrastructure_recovery: nodeMs(150), program_startup: nodeMs(50), checkpoint_restore: nodeMs(10), idle: 0 });
    // The asynchronous save at 900 s is outside the window.
    expect(busy!.checkpoint_save_bandwidth_bytes_per_s.count).toBe(1);
  });

  it('groups bookings by fabric, summing node-milliseconds before dividing', () => {
    const groups = groupFigures(unitsOf(BOOKINGS, [run], whole, false), ['fabric']);
    expect(groups.map((g) => [g.group.fabric, g.goodput])).toEqual([
      ['ethernet', 0],
      ['infiniband', 0.265],
    ]);
    const all = groupFigures(unitsOf(BOOKINGS, [run], whole, false), []);
    expect(all[0]!.booked_node_ms).toBe(nodeMs(2000) + 1_000_000);
    expect(all[0]!.goodput).toBe(nodeMs(530) / (nodeMs(2000) + 1_000_000));
  });
});

describe('helpers', () => {
  it('percentile is nearest rank', () => {
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.95)).toBe(10);
    expect(percentile([1, 2, 3, 4], 0.5)).toBe(2);
    expect(percentile([], 0.5)).toBeNull();
  });

  it('an overlay cuts the segments it covers and keeps what lies either side', () => {
    const segs: Segment[] = [
      [0, 10, 'productive'],
      [10, 20, 'other'],
      [20, 30, 'productive'],
    ];
    overlaySegment(segs, 5, 25, 'checkpoint_save_stall');
    expect(segs).toEqual([
      [0, 5, 'productive'],
      [5, 25, 'checkpoint_save_stall'],
      [25, 30, 'productive'],
    ]);
  });
});
