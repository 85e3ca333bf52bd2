/**
 * The fixed buckets the desk's distributions are kept in (checkpoint bandwidths, detection and resume latencies):
 * 128 buckets to each doubling, so every bucket spans a factor of 2^(1/128) (0.54 %), whatever the unit, from the
 * smallest double to the largest; zero has its own bucket, and a negative value the mirror of its magnitude's.
 * A bucket keeps its count and the exact sum of its values, so a percentile read from the histograms is the mean
 * of the values in the bucket where its rank falls: the nearest-rank value itself when they are all one value,
 * within 0.54 % of it always. The rows a day adds are bounded by the buckets in use, not by the samples.
 */
export const HISTOGRAM_BUCKETS_PER_DOUBLING = 128;

/** log2 of the smallest subnormal double is −1074: offsetting by more keeps every magnitude's index positive. */
const OFFSET = 1075 * HISTOGRAM_BUCKETS_PER_DOUBLING;

/** The bucket a value falls in: an integer, increasing with the value (0 for zero). */
export function histogramBucket(value: number): number {
  if (!Number.isFinite(value)) throw new RangeError(`histogramBucket: ${value} is not a finite number`);
  if (value === 0) return 0;
  const index = 1 + OFFSET + Math.floor(Math.log2(Math.abs(value)) * HISTOGRAM_BUCKETS_PER_DOUBLING);
  return value > 0 ? index : -index;
}
