import { dayOf, splitByDay } from './day-sums.js';
import type { Segment } from './segments.js';

/**
 * How the projection stores a run's segments: cut at UTC midnights, so every stored piece lies inside one day.
 * A window's edge is then found by a btree range on the pieces' start (a piece meeting [a, b) starts at or after
 * a's UTC midnight), where whole segments needed a GiST index on their span, whose insert cost
 * grew with a run's history and was most of catch-up's database time at long runs.
 *
 * The fold's segment list never holds two touching segments of one label (appendSegment merges them), so joining
 * touching pieces of one label at a midnight gives back exactly the segments that were cut. A batch replaces a
 * run's stored tail from the start of its first changed segment: that is the start of that segment's first piece,
 * and every piece of an earlier segment starts before it, so the replacement is the same with pieces.
 */
export function cutAtMidnights(s: Segment): Segment[] {
  const [start, end, label] = s;
  return splitByDay(start, end).map(([day, ms]) => {
    const from = Math.max(start, day);
    return [from, from + ms, label];
  });
}

/** The stored pieces of a run (in start order) joined back into its segments: the inverse of cutAtMidnights. */
export function joinAtMidnights(pieces: readonly Segment[]): Segment[] {
  const out: Segment[] = [];
  for (const p of pieces) {
    const last = out.at(-1);
    if (last && last[1] === p[0] && last[2] === p[2] && dayOf(p[0]) === p[0]) last[1] = p[1];
    else out.push([p[0], p[1], p[2]]);
  }
  return out;
}
