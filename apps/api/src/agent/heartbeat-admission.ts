import { saturatedError, type Admission } from '../http/admission.js';

/** How many heartbeats one API process holds at once: authenticating, or waiting for their liveness write. */
export interface HeartbeatAdmissionLimits {
  inFlight: number;
}

/**
 * 512 beats in flight is ≈ 40 ms of beats at 12,500/s, the fleet rate the heartbeat bench aims at: a process
 * that holds more is already answering later than a beat is worth, so it sheds instead of queueing. What a
 * process answers past saturation is this limit ÷ a beat's time in flight (mostly its liveness write): that time
 * is what to cut (two upserts in flight, liveness-writer.ts), not a longer queue.
 */
export const DEFAULT_HEARTBEAT_ADMISSION: HeartbeatAdmissionLimits = { inFlight: 512 };

/**
 * Sheds heartbeats beyond the limit at once with `rate_limited` and Retry-After 1, before they authenticate or
 * touch the database, rather than letting a queue grow until every beat is late (test/bench/README.md, run 6:
 * offered 2× its ceiling, the route answered fewer beats than at 1×). A refused beat writes nothing; the agent
 * beats again on its interval, and a node is declared lost only after several missed intervals. A plain
 * counter, not a queue: a beat that cannot start now is worth less than the next one. It counts beats, not
 * requests: a batch of a host's beats (`POST /v1/agent/heartbeats`) takes one unit per beat, and is admitted
 * whole or shed whole (none of its beats is written), so a batch never holds more than its share of the limit.
 */
export function heartbeatAdmission(limits: HeartbeatAdmissionLimits = DEFAULT_HEARTBEAT_ADMISSION): Admission {
  let inFlight = 0;
  const admit: Admission = async (work, beats = 1) => {
    if (inFlight + beats > limits.inFlight) throw saturatedError(BUSY);
    inFlight += beats;
    try {
      return await work();
    } finally {
      inFlight -= beats;
    }
  };
  // Full: a beat arriving now is shed before its body is parsed. Past saturation, parsing the batches it refuses
  // took the core the admitted ones needed (the bench offered 2× the ceiling and answered half as many beats).
  admit.refuseIfSaturated = () => {
    if (inFlight >= limits.inFlight) throw saturatedError(BUSY);
  };
  return admit;
}

const BUSY = 'the API is holding as many heartbeats as it can';
