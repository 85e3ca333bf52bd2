import { describe, expect, it } from 'vitest';
import { countedDistribution, distribution, histogramBucket, HISTOGRAM_BUCKETS_PER_DOUBLING } from '../src/index.js';

/** A sample kept as the projection keeps it: per bucket, its count and its values' sum; read back as [mean, count]. */
function kept(values: number[]): Array<[number, number]> {
  const buckets = new Map<number, { sum: number; count: number }>();
  for (const v of values) {
    const b = buckets.get(histogramBucket(v)) ?? { sum: 0, count: 0 };
    b.sum += v;
    b.count += 1;
    buckets.set(histogramBucket(v), b);
  }
  return [...buckets.values()].map((b) => [b.sum / b.count, b.count]);
}

describe('the fixed histogram buckets', () => {
  it('gives zero its own bucket, orders values by bucket, and mirrors negatives', () => {
    expect(histogramBucket(0)).toBe(0);
    const values = [-1e12, -3, -1, -Number.MIN_VALUE, Number.MIN_VALUE, 1e-9, 1, 2, 3, 4e8, 8e8, Number.MAX_VALUE];
    const buckets = values.map(histogramBucket);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!).toBeGreaterThan(buckets[i - 1]!);
    expect(histogramBucket(-3)).toBe(-histogramBucket(3));
    expect(histogramBucket(Number.MIN_VALUE)).toBeGreaterThan(0);
    expect(Number.isSafeInteger(histogramBucket(Number.MAX_VALUE)) && histogramBucket(Number.MAX_VALUE) < 2 ** 31).toBe(true);
    expect(() => histogramBucket(Number.NaN)).toThrow(RangeError);
    expect(() => histogramBucket(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });

  it('spans a factor of 2^(1/128) a bucket: 128 buckets to each doubling', () => {
    expect(histogramBucket(2) - histogramBucket(1)).toBe(HISTOGRAM_BUCKETS_PER_DOUBLING);
    expect(histogramBucket(1024) - histogramBucket(1)).toBe(10 * HISTOGRAM_BUCKETS_PER_DOUBLING);
    expect(histogramBucket(1.006)).toBe(histogramBucket(1) + 1);
    expect(histogramBucket(1.005)).toBe(histogramBucket(1));
  });

  it("reads the worked example's percentiles exactly, and any other within a bucket's width of the exact ones", () => {
    expect(countedDistribution(kept([4e8, 8e8]))).toEqual(distribution([4e8, 8e8]));
    expect(countedDistribution(kept([30_000, 30_000, 120_000]))).toEqual(distribution([30_000, 30_000, 120_000]));
    let seed = 7;
    const random = () => ((seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647);
    const values = Array.from({ length: 5_000 }, () => 1e8 * (1 + 9 * random()));
    const exact = distribution(values);
    const read = countedDistribution(kept(values));
    expect(read.count).toBe(values.length);
    for (const q of ['p50', 'p95'] as const) expect(Math.abs(read[q]! / exact[q]! - 1)).toBeLessThan(2 ** (1 / HISTOGRAM_BUCKETS_PER_DOUBLING) - 1);
    expect(kept(values).length).toBeLessThanOrEqual(Math.ceil(Math.log2(10) * HISTOGRAM_BUCKETS_PER_DOUBLING) + 1);
  });
});
