import { describe, expect, it } from 'vitest';
import { countedDistribution, cutAtMidnights, DAY_MS, distribution, joinAtMidnights, emptyRunTelemetry, foldRunBatch, runTelemetryOf, splitByDay, windowPieces, type RunTelemetry } from '../src/index.js';
import { RUN_EVENTS, RUN_ID, T0 } from './support/known-history.js';

describe('per-day sums', () => {
  it('cuts a span at UTC midnights, nothing lost or counted twice', () => {
    expect(splitByDay(T0 - 5000, T0 + DAY_MS + 7000)).toEqual([[T0 - DAY_MS, 5000], [T0, DAY_MS], [T0 + DAY_MS, 7000]]);
    expect(splitByDay(T0, T0 + DAY_MS)).toEqual([[T0, DAY_MS]]);
  });

  it('stores a segment as pieces inside one UTC day each, and joins them back to the segments they were', () => {
    expect(cutAtMidnights([T0 - 5000, T0 + DAY_MS + 7000, 'productive'])).toEqual([
      [T0 - 5000, T0, 'productive'], [T0, T0 + DAY_MS, 'productive'], [T0 + DAY_MS, T0 + DAY_MS + 7000, 'productive'],
    ]);
    expect(cutAtMidnights([T0, T0 + DAY_MS, 'productive'])).toEqual([[T0, T0 + DAY_MS, 'productive']]);
    // A run's list as the fold keeps it: touching segments differ in label, gaps stay gaps, midnights are crossed.
    const segments: Array<[number, number, 'productive' | 'checkpoint_save_stall']> = [
      [T0 - 9000, T0 - 10, 'productive'], [T0 - 10, T0 + 20, 'checkpoint_save_stall'], [T0 + 20, T0 + 2 * DAY_MS, 'productive'], [T0 + 2 * DAY_MS + 5, T0 + 3 * DAY_MS, 'productive'],
    ];
    const pieces = segments.flatMap(cutAtMidnights);
    expect(pieces).toHaveLength(6);
    expect(joinAtMidnights(pieces)).toEqual(segments);
    // Only pieces meeting at a midnight are joined: a segment ending at midnight followed by a gap stays as it was.
    expect(joinAtMidnights([[T0 - 10, T0, 'productive'], [T0 + 1, T0 + 2, 'productive']])).toHaveLength(2);
  });

  it('cuts a window into whole days inside one bucket and the parts of days at the edges', () => {
    expect(windowPieces(T0, T0 + 2 * DAY_MS, DAY_MS)).toEqual({ days: [{ day: T0, bucket: 0 }, { day: T0 + DAY_MS, bucket: 1 }], partial: [] });
    const half = DAY_MS / 2;
    expect(windowPieces(T0 + half, T0 + 2 * DAY_MS + half, DAY_MS)).toEqual({
      days: [],
      partial: [
        { from: T0 + half, to: T0 + DAY_MS + half, bucket: 0 },
        { from: T0 + DAY_MS + half, to: T0 + 2 * DAY_MS + half, bucket: 1 },
      ],
    });
    expect(windowPieces(T0 - 10, T0 + DAY_MS + 10, 2 * DAY_MS).partial).toEqual([{ from: T0 - 10, to: T0, bucket: 0 }, { from: T0 + DAY_MS, to: T0 + DAY_MS + 10, bucket: 0 }]);
    expect(windowPieces(T0 + 10, T0 + 20, 100)).toEqual({ days: [], partial: [{ from: T0 + 10, to: T0 + 20, bucket: 0 }] });
  });

  it('takes nearest-rank percentiles of counted values exactly as of the expanded list', () => {
    const values = [3, 3, 3, 9, 1, 7, 7, 100];
    const counted = new Map<number, number>();
    for (const v of values) counted.set(v, (counted.get(v) ?? 0) + 1);
    expect(countedDistribution([...counted])).toEqual(distribution(values));
    expect(countedDistribution([[5, 0]])).toEqual({ count: 0, p50: null, p95: null });
  });
});

describe("a run's fold in batches", () => {
  it('keeps a small state whatever the cut of the events, and its changes rebuild the whole fold', () => {
    const whole = runTelemetryOf(RUN_ID, RUN_EVENTS);
    for (const size of [1, 2, 5, 100]) {
      let state: RunTelemetry = emptyRunTelemetry(RUN_ID);
      let stored: Array<[number, number, string]> = [];
      for (let i = 0; i < RUN_EVENTS.length; i += size) {
        const batch = foldRunBatch(state, RUN_EVENTS.slice(i, i + size));
        if (batch.kind !== 'append') throw new Error(`expected an append, got ${batch.kind}`);
        const from = batch.changes.replaceSegmentsFrom;
        if (from !== null) stored = stored.filter((s) => s[0] < from);
        stored.push(...batch.changes.segments);
        state = batch.state;
      }
      expect(stored).toEqual(whole.segments);
      expect(state.checkpoints).toEqual([]);
      expect(state.segments).toEqual(whole.segments.slice(-state.segments.length));
      expect(state.interruptions).toEqual([]);
    }
  });
});
