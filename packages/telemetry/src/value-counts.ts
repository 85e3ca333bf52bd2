/**
 * A multiset of numbers as value → how many times, for nearest-rank percentiles of many units' values at once.
 * The desk folds ≈ 15,000 histogram buckets of 2,000 bookings into each group and the totals: keeping one count
 * per distinct value and sorting those in a Float64Array (a native numeric sort, no comparator) costs a fraction
 * of pushing [value, count] pairs and sorting the pairs. Equal values merge; the percentile is a value, so which
 * unit it came from never changed the answer. Values are finite (histogram.ts refuses others); 0 and -0 are one
 * key and both print as 0.
 */
export class ValueCounts {
  private readonly counts = new Map<number, number>();
  total = 0;

  add(value: number, count = 1): void {
    if (!(count > 0)) return;
    this.counts.set(value, (this.counts.get(value) ?? 0) + count);
    this.total += count;
  }

  /** The ⌈q·n⌉-th smallest (nearest rank, as SQL's percentile_disc), for each q; null when empty. */
  percentiles(qs: readonly number[]): Array<number | null> {
    if (this.total === 0) return qs.map(() => null);
    const sorted = Float64Array.from(this.counts.keys()).sort();
    return qs.map((q) => {
      const rank = Math.max(1, Math.ceil(q * this.total));
      let seen = 0;
      for (const v of sorted) if ((seen += this.counts.get(v)!) >= rank) return v;
      return null;
    });
  }
}
