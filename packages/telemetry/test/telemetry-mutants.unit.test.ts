import { describe, expect, it } from 'vitest';
import { BADPUT_CAUSES, TIME_LABELS, appendSegment, bandwidthOf, distribution, groupFigures, overlaySegment, runTelemetryOf, unitsOf, type BookingFacts, type Segment, type TelemetryEvent } from '../src/index.js';

/**
 * The run fold's and the figures' edges the known history passes over: events out of place or malformed, each
 * interruption's detection, checkpoints that stall or not, window boundaries, and units that cover more than
 * was booked. Times are seconds after T0; expectations are worked out by hand.
 */
const T0 = Date.parse('2026-11-02T00:00:00.000Z');
const at = (s: number) => T0 + s * 1000;
const iso = (s: number) => new Date(at(s)).toISOString();
const ev = (s: number, type: string, data: Record<string, unknown> = {}): TelemetryEvent => ({ type, data, at: at(s) });
const fold = (events: TelemetryEvent[]) => runTelemetryOf('run_x', events);
const seg = (from: number, to: number, label: Segment[2]): Segment => [at(from), at(to), label];
const training = [ev(0, 'RunReserved', { booking_id: 'bkg_1' }), ev(0, 'StageStarted', { stage: 'pretrain' }), ev(10, 'ProgressRecorded', { stage: 'pretrain', step: 1 })];

describe('the run fold at its edges', () => {
  it('folds an SLO breach as nothing: a judgement on latencies, not time the run spent', () => {
    const breach = ev(15, 'SloBreached', { kind: 'detection', latency_ms: 12_000, target_ms: 10_000 });
    const withBreach = fold([...training, breach, ev(20, 'RunSucceeded')]);
    expect(withBreach).toEqual(fold([...training, ev(20, 'RunSucceeded')]));
    // Even as the last event, it neither moves the clock nor closes the segment in progress.
    expect(fold([...training, breach])).toEqual(fold(training));
  });

  it('starts at the first RunReserved: earlier events and a repeated reservation are ignored, a booking must be a string', () => {
    const run = fold([ev(0, 'StageStarted', { stage: 'data_prep' }), ev(10, 'RunReserved', { booking_id: 5 }), ev(20, 'RunReserved', { booking_id: 'bkg_2' }), ev(30, 'RunSucceeded')]);
    expect(run).toMatchObject({ started_at: at(10), booking_id: null, ended_at: at(30), last_at: at(30), mode: 'ended' });
    expect(run.segments).toEqual([seg(10, 30, 'program_startup')]);
  });

  it('ignores what comes after the run ended, and never goes back in time', () => {
    const run = fold([ev(0, 'RunReserved', { booking_id: 'bkg_1' }), ev(20, 'StageStarted', { stage: 'data_prep' }), ev(15, 'StageCompleted'), ev(30, 'RunFailed'), ev(40, 'StageStarted', { stage: 'sft' })]);
    expect(run.segments).toEqual([seg(0, 20, 'program_startup'), seg(20, 30, 'other')]);
    expect(run).toMatchObject({ booking_id: 'bkg_1', ended_at: at(30), last_at: at(30), stage: 'data_prep' });
    expect(fold([ev(0, 'RunReserved'), ev(5, 'RunCancelled')])).toMatchObject({ ended_at: at(5), mode: 'ended' });
  });

  it('labels each stage`s time: data prep, planning as start-up, evaluation and a stage without a name as other', () => {
    const run = fold([
      ev(0, 'RunReserved'),
      ev(0, 'StageStarted', { stage: 'data_prep' }),
      ev(10, 'StageStarted', { stage: 'planning' }),
      ev(20, 'StageStarted', { stage: 'eval_pretrain' }),
      ev(30, 'ProgressRecorded', { stage: 'eval_pretrain', step: 3 }),
      ev(40, 'StageStarted', { stage: 7 }),
      ev(50, 'StageStarted', { stage: 'sft' }),
      ev(60, 'ProgressRecorded', { step: 1 }),
      ev(70, 'ProgressRecorded', { step: 'two' }),
      ev(80, 'StageCompleted'),
      ev(90, 'RunSucceeded'),
    ]);
    expect(run.segments).toEqual([seg(0, 10, 'data_prep'), seg(10, 20, 'program_startup'), seg(20, 50, 'other'), seg(50, 60, 'program_startup'), seg(60, 80, 'productive'), seg(80, 90, 'other')]);
    expect(run.max_step).toBe(1);
  });

  it('a failed task that is not a crash wastes the work since the last report and interrupts nothing', () => {
    const run = fold([...training, ev(20, 'TaskFailed', { failure: 'error' }), ev(30, 'ProgressRecorded', { stage: 'pretrain', step: 2 })]);
    expect(run.segments).toEqual([seg(0, 10, 'program_startup'), seg(10, 20, 'wasted_progress'), seg(20, 30, 'productive')]);
    expect(run.interruptions).toEqual([]);
  });

  it('a hang: detected from the last progress, recovery overlaid from there, counted once with the crash that follows', () => {
    const run = fold([
      ...training,
      ev(20, 'ProgressRecorded', { stage: 'pretrain', step: 2 }),
      ev(50, 'TaskHung', { last_progress_at: iso(25) }),
      ev(60, 'TaskFailed', { failure: 'gpu_fault' }),
      ev(65, 'StageFailed'),
      ev(80, 'RunResumed'),
      ev(90, 'ProgressRecorded', { stage: 'pretrain', step: 2 }),
      ev(95, 'ProgressRecorded', { stage: 'pretrain', step: 2 }),
      ev(100, 'ProgressRecorded', { stage: 'pretrain', step: 3 }),
    ]);
    expect(run.interruptions).toEqual([{ cause: 'hang', at: at(50), detection_ms: 25_000, resume_ms: 30_000 }]);
    expect(run.segments).toEqual([
      seg(0, 10, 'program_startup'),
      seg(10, 20, 'productive'),
      seg(20, 25, 'wasted_progress'),
      seg(25, 80, 'infrastructure_recovery'),
      seg(80, 90, 'program_startup'),
      seg(90, 95, 'wasted_progress'),
      seg(95, 100, 'productive'),
    ]);
  });

  it('a crash reported by the agent has no detection latency; a lost node heard from after the event has none either', () => {
    const crash = fold([...training, ev(20, 'TaskFailed', { failure: 'crash' })]);
    expect(crash.interruptions).toEqual([{ cause: 'crash', at: at(20), detection_ms: null, resume_ms: null }]);
    expect(crash.mode).toBe('recovering');
    const skewed = fold([...training, ev(20, 'NodeLost', { last_heartbeat_at: iso(25) })]);
    expect(skewed.interruptions).toEqual([{ cause: 'node_lost', at: at(20), detection_ms: 0, resume_ms: null }]);
    expect(skewed.segments.at(-1)).toEqual(seg(10, 20, 'wasted_progress'));
    const unreadable = fold([...training, ev(20, 'NodeLost', { last_heartbeat_at: 'yesterday' })]);
    expect(unreadable.interruptions).toEqual([{ cause: 'node_lost', at: at(20), detection_ms: null, resume_ms: null }]);
    const early = fold([ev(100, 'RunReserved'), ev(110, 'NodeLost', { last_heartbeat_at: iso(40) })]);
    expect(early.interruptions[0]!.detection_ms).toBe(70_000);
    expect(early.segments).toEqual([seg(100, 110, 'infrastructure_recovery')]);
  });

  it('a resume without a pending interruption times nothing; a failed stage outside recovery is other time', () => {
    const run = fold([...training, ev(20, 'StageFailed'), ev(30, 'RunResumed'), ev(40, 'ProgressRecorded', { stage: 'pretrain', step: 2 })]);
    expect(run.interruptions).toEqual([]);
    expect(run.segments).toEqual([seg(0, 10, 'program_startup'), seg(10, 20, 'wasted_progress'), seg(20, 30, 'other'), seg(30, 40, 'program_startup')]);
  });

  it('a synchronous save and a restore stall training for their duration; an asynchronous save or a malformed one does not', () => {
    const run = fold([
      ...training,
      ev(20, 'CheckpointSaved', { bytes: 3000, save_seconds: 1.5 }),
      ev(30, 'CheckpointSaved', { bytes: 1000, save_seconds: 4, async: true }),
      ev(40, 'CheckpointSaved', { bytes: 1000, save_seconds: -1 }),
      ev(50, 'CheckpointRestored', { bytes: -5, restore_seconds: 2 }),
      ev(60, 'CheckpointSaved', { bytes: 'x', save_seconds: 'y' }),
    ]);
    expect(run.checkpoints).toEqual([
      { kind: 'save', at: at(20), bytes: 3000, ms: 1500 },
      { kind: 'save', at: at(30), bytes: 1000, ms: 4000 },
    ]);
    expect(run.segments).toEqual([seg(0, 10, 'program_startup'), seg(10, 18.5, 'productive'), seg(18.5, 20, 'checkpoint_save_stall'), seg(20, 48, 'productive'), seg(48, 50, 'checkpoint_restore'), seg(50, 60, 'productive')]);
    // A save longer than the run so far stalls from the run's start, not before it.
    expect(fold([ev(0, 'RunReserved'), ev(5, 'CheckpointSaved', { bytes: 1, save_seconds: 9 })]).segments).toEqual([seg(0, 5, 'checkpoint_save_stall')]);
  });
});

describe('the run fold: what moves the step, the mode and the recompute mark', () => {
  it('progress of a non-training stage or from a recovering run moves neither the mode nor the step', () => {
    const run = fold([
      ...training,
      ev(20, 'ProgressRecorded', { stage: 'data_prep', step: 90 }),
      ev(30, 'ProgressRecorded', { stage: 'planning', step: 91 }),
      ev(40, 'ProgressRecorded', { stage: 'eval_pretrain', step: 92 }),
    ]);
    expect(run).toMatchObject({ max_step: 1, mode: 'training' });
    const lost = fold([...training, ev(20, 'NodeLost', { last_heartbeat_at: iso(20) }), ev(30, 'ProgressRecorded', { stage: 'pretrain', step: 5 }), ev(40, 'RunResumed')]);
    expect(lost).toMatchObject({ max_step: 1, mode: 'train_startup' });
    expect(lost.segments.at(-1)).toEqual(seg(20, 40, 'infrastructure_recovery'));
  });

  it('training time before any step is known is not productive', () => {
    const run = fold([ev(0, 'RunReserved'), ev(0, 'StageStarted', { stage: 'pretrain' }), ev(10, 'ProgressRecorded', { stage: 'pretrain' }), ev(20, 'StageCompleted')]);
    expect(run.max_step).toBe(-1);
    expect(run.segments).toEqual([seg(0, 10, 'program_startup'), seg(10, 20, 'wasted_progress')]);
  });

  it('a GPU fault interrupts like a crash; a failed stage is not itself an interruption', () => {
    expect(fold([...training, ev(20, 'TaskFailed', { failure: 'gpu_fault' })]).interruptions).toEqual([{ cause: 'gpu_fault', at: at(20), detection_ms: null, resume_ms: null }]);
    expect(fold([...training, ev(20, 'StageFailed', { failure: 'crash' })]).interruptions).toEqual([]);
  });

  it('a resume after the run left recovery another way (a new stage) times nothing', () => {
    const run = fold([...training, ev(20, 'NodeLost', { last_heartbeat_at: iso(15) }), ev(30, 'StageStarted', { stage: 'pretrain' }), ev(40, 'RunResumed')]);
    expect(run.interruptions).toEqual([{ cause: 'node_lost', at: at(20), detection_ms: 5000, resume_ms: null }]);
  });

  it('a stage completing during recovery ends the recovery time', () => {
    const run = fold([...training, ev(20, 'NodeLost', { last_heartbeat_at: iso(20) }), ev(30, 'StageCompleted'), ev(40, 'RunSucceeded')]);
    expect(run.segments.slice(-2)).toEqual([seg(20, 30, 'infrastructure_recovery'), seg(30, 40, 'other')]);
  });

  it('after a proposed restart, steps up to the one reached are recomputed: wasted, not productive', () => {
    const run = fold([
      ...training,
      ev(20, 'ProgressRecorded', { stage: 'pretrain', step: 5 }),
      ev(30, 'RestartProposed'),
      ev(40, 'RestartApproved'),
      ev(50, 'StageStarted', { stage: 'pretrain' }),
      ev(60, 'ProgressRecorded', { stage: 'pretrain', step: 3 }),
      ev(70, 'ProgressRecorded', { stage: 'pretrain', step: 5 }),
      ev(80, 'ProgressRecorded', { stage: 'pretrain', step: 6 }),
    ]);
    expect(run.segments.slice(-4)).toEqual([seg(30, 40, 'awaiting_operator'), seg(40, 60, 'program_startup'), seg(60, 70, 'wasted_progress'), seg(70, 80, 'productive')]);
  });

  it('a save of no measurable time or of zero bytes is still recorded; every restore stalls, even one marked asynchronous', () => {
    const run = fold([...training, ev(20, 'CheckpointSaved', { bytes: 0, save_seconds: 0 }), ev(30, 'CheckpointRestored', { bytes: 10, restore_seconds: 2, async: true })]);
    expect(run.checkpoints).toEqual([
      { kind: 'save', at: at(20), bytes: 0, ms: 0 },
      { kind: 'restore', at: at(30), bytes: 10, ms: 2000 },
    ]);
    expect(run.segments.slice(-2)).toEqual([seg(10, 28, 'productive'), seg(28, 30, 'checkpoint_restore')]);
  });

  it('time labels are productive and every badput cause', () => {
    expect(TIME_LABELS).toHaveLength(10);
    expect(new Set(TIME_LABELS)).toEqual(new Set(['productive', ...BADPUT_CAUSES]));
  });
});

describe('units and figures at their edges', () => {
  const booking = (o: Partial<BookingFacts> = {}): BookingFacts => ({
    booking_id: 'bkg_1',
    region: 'r1',
    fabric: 'ib',
    gpu: 'h100',
    nodes: 2,
    gpus_per_node: 8,
    rate_usd_per_gpu_hour: 3,
    term_start: at(0),
    term_end: at(100),
    ...o,
  });

  it('counts an interruption at the window`s start, not one at its end; a transfer of no duration has no bandwidth', () => {
    const run = fold([...training, ev(20, 'NodeLost', { last_heartbeat_at: iso(15) }), ev(30, 'RunResumed'), ev(40, 'TaskFailed', { failure: 'crash' })]);
    const [u] = unitsOf([booking()], [run], { from: at(20), to: at(40) }, false);
    expect(u!.interruptions).toEqual({ node_lost: 1, hang: 0, crash: 0, gpu_fault: 0 });
    expect(u!.detection_ms).toEqual([5000]);
    expect(u!.resume_ms).toEqual([10_000]);
    // Before the window: not counted.
    expect(unitsOf([booking()], [run], { from: at(21), to: at(40) }, false)[0]!.interruptions.node_lost).toBe(0);
    expect(bandwidthOf({ kind: 'save', at: 0, bytes: 10, ms: 0 })).toBeNull();
    expect(bandwidthOf({ kind: 'save', at: 0, bytes: 10, ms: 500 })).toBe(20);
  });

  it('per run: skips runs without a known booking, never started or outside the window; an unfinished run spans to its last event', () => {
    const unfinished = fold([...training, ev(30, 'ProgressRecorded', { stage: 'pretrain', step: 2 })]);
    const elsewhere = runTelemetryOf('run_y', [ev(0, 'RunReserved', { booking_id: 'bkg_unknown' }), ev(50, 'RunSucceeded')]);
    const never = runTelemetryOf('run_z', []);
    const units = unitsOf([booking()], [unfinished, elsewhere, never], { from: at(0), to: at(100) }, true);
    expect(units.map((u) => [u.run_id, u.booked_node_ms])).toEqual([['run_x', 60_000]]);
    expect(unitsOf([booking()], [unfinished], { from: at(30), to: at(100) }, true)).toEqual([]);
  });

  it('per booking: a booking outside the window is no unit unless a run of it is in the window', () => {
    const run = fold([ev(200, 'RunReserved', { booking_id: 'bkg_1' }), ev(210, 'RunSucceeded')]);
    expect(unitsOf([booking()], [], { from: at(100), to: at(300) }, false)).toEqual([]);
    const [u] = unitsOf([booking()], [run], { from: at(100), to: at(300) }, false);
    expect(u).toMatchObject({ booking_id: 'bkg_1', booked_node_ms: 0, run_id: null });
    expect(u!.covered_node_ms.program_startup).toBe(20_000);
  });

  it('a unit whose runs cover more than was booked counts what they covered as booked, with nothing idle', () => {
    const run = fold([ev(0, 'RunReserved', { booking_id: 'bkg_1' }), ev(0, 'StageStarted', { stage: 'data_prep' }), ev(100, 'RunSucceeded')]);
    const [g] = groupFigures(unitsOf([booking({ term_end: at(50) })], [run], { from: at(0), to: at(100) }, false), ['booking']);
    expect(g).toMatchObject({ booked_node_ms: 200_000, productive_node_ms: 0, badput_node_ms: 200_000, goodput: 0, effective_usd_per_productive_gpu_hour: null });
    expect(g!.badput_by_cause_node_ms).toMatchObject({ data_prep: 200_000, idle: 0 });
    expect(g!.booked_usd).toBe((3 * 8 * 200_000) / 3_600_000);
  });

  it('nothing booked: goodput and the interruption rate are unknown, not zero', () => {
    const [g] = groupFigures(unitsOf([booking()], [fold([ev(200, 'RunReserved', { booking_id: 'bkg_1' })])], { from: at(100), to: at(300) }, false), ['region']);
    expect(g).toMatchObject({ group: { region: 'r1' }, units: 1, booked_node_ms: 0, goodput: null, interruption_rate_per_1k_node_hours: null, booked_usd: 0 });
  });

  it('groups by run with a booking unit`s run as empty, and orders groups by their key', () => {
    const units = unitsOf([booking({ booking_id: 'bkg_b', region: 'zz' }), booking({ booking_id: 'bkg_a', region: 'aa' })], [], { from: at(0), to: at(100) }, false);
    expect(groupFigures(units, ['region']).map((g) => g.group)).toEqual([{ region: 'aa' }, { region: 'zz' }]);
    expect(groupFigures(units, ['run', 'booking']).map((g) => g.group)).toEqual([
      { run: '', booking: 'bkg_a' },
      { run: '', booking: 'bkg_b' },
    ]);
    expect(groupFigures(units, ['fabric', 'gpu'])).toHaveLength(1);
  });

  it('distributions are sorted numerically before ranking', () => {
    expect(distribution([10, 9, 100, 2])).toEqual({ count: 4, p50: 9, p95: 100 });
    expect(distribution([])).toEqual({ count: 0, p50: null, p95: null });
  });
});

describe('segments at their edges', () => {
  it('appending merges only a touching segment of the same label, and ignores an empty one', () => {
    const segs: Segment[] = [[0, 10, 'productive']];
    appendSegment(segs, 10, 10, 'other');
    appendSegment(segs, 10, 20, 'productive');
    appendSegment(segs, 25, 30, 'productive');
    appendSegment(segs, 30, 40, 'other');
    expect(segs).toEqual([
      [0, 20, 'productive'],
      [25, 30, 'productive'],
      [30, 40, 'other'],
    ]);
  });

  it('an overlay from before every segment replaces them all; an empty overlay changes nothing', () => {
    const segs: Segment[] = [
      [10, 20, 'productive'],
      [20, 30, 'other'],
    ];
    overlaySegment(segs, 25, 25, 'idle');
    expect(segs).toHaveLength(2);
    overlaySegment(segs, 20, 30, 'checkpoint_restore');
    expect(segs).toEqual([
      [10, 20, 'productive'],
      [20, 30, 'checkpoint_restore'],
    ]);
    // A reversed interval is empty too.
    overlaySegment(segs, 25, 15, 'idle');
    expect(segs).toEqual([
      [10, 20, 'productive'],
      [20, 30, 'checkpoint_restore'],
    ]);
    overlaySegment(segs, 0, 30, 'idle');
    expect(segs).toEqual([[0, 30, 'idle']]);
  });
});
