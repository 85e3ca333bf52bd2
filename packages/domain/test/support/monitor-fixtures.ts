import { taskIdFor, type NodeFailure } from '@ito/domain';
import { NODES, RUN } from './run-history.js';

/** The monitor's settings the tests judge with: 2 s heartbeats, 3 misses, k = 5, start-up allowances of at most 600 s. */
export const SETTINGS = { interval_s: 2, misses: 3, hang_factor: 5, first_step_max_s: 600 };
/** A moment `s` seconds after the tests' fixed origin. */
export const T = (s: number) => new Date(Date.UTC(2026, 11, 3, 12, 0, 0) + s * 1000);

/** The monitor's finding that rank 1's node of pretrain's first attempt fell silent at 0 and was lost at 6.4 s. */
export const lostFinding = (o: Partial<NodeFailure> = {}): NodeFailure => ({
  node_id: NODES[1]!,
  task_id: taskIdFor(RUN, 'pretrain', 1, 1),
  attempt: 1,
  verdict: { kind: 'lost', silent_s: 6.4 },
  last_heartbeat_at: T(0),
  step: null,
  detected_at: T(6.4),
  ...o,
});
