import { admission, type Admission, type AdmissionLimits } from '../http/admission.js';

/**
 * How many desk telemetry queries one API process computes at once, and how many may wait for a turn. A query
 * sums every segment of its window and holds up to four pool connections while it does (2–3 s at 10,000 runs,
 * test/bench/README.md): unbounded, a burst of them takes the pool that heartbeats and agent calls need.
 */
export type DeskAdmissionLimits = AdmissionLimits;

export const DEFAULT_DESK_ADMISSION: DeskAdmissionLimits = { concurrency: 2, queue: 8 };

/** Runs desk queries within the limits; one that would wait beyond the queue is refused as rate_limited. */
export type DeskAdmission = Admission;

export function deskAdmission(limits: DeskAdmissionLimits = DEFAULT_DESK_ADMISSION): DeskAdmission {
  return admission(limits, 'the desk is already computing as many telemetry queries as it can');
}
