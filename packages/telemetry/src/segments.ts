import type { TimeLabel } from './causes.js';

/** A half-open interval of wall time [start, end) in integer epoch milliseconds, spent on one thing. */
export type Segment = [start: number, end: number, label: TimeLabel];

/** Appends [start, end) to a sorted, non-overlapping list, merging with the last segment when labels match. */
export function appendSegment(segments: Segment[], start: number, end: number, label: TimeLabel): void {
  if (end <= start) return;
  const last = segments[segments.length - 1];
  if (last && last[1] === start && last[2] === label) last[1] = end;
  else segments.push([start, end, label]);
}

/**
 * Relabels [start, end) of a sorted, non-overlapping list: what was there is cut away and the overlay put in its
 * place. Overlays always end at the latest event, so only the tail of the list is touched.
 */
export function overlaySegment(segments: Segment[], start: number, end: number, label: TimeLabel): void {
  if (end <= start) return;
  const tail: Segment[] = [];
  while (segments.length > 0 && segments[segments.length - 1]![1] > start) tail.unshift(segments.pop()!);
  for (const s of tail) if (s[0] < start) appendSegment(segments, s[0], start, s[2]);
  appendSegment(segments, start, end, label);
  for (const s of tail) if (s[1] > end) appendSegment(segments, Math.max(s[0], end), s[1], s[2]);
}

/** Milliseconds of [start, end) inside the window [from, to). */
export function clippedMs(start: number, end: number, from: number, to: number): number {
  return Math.max(0, Math.min(end, to) - Math.max(start, from));
}
