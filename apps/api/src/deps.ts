import type pg from 'pg';
import type { Logger } from '@ito/config';
import type { Ledger } from '@ito/ledger';
import type { AgentSettings } from './agent/agent-settings.js';
import type { QueueSource } from './metrics/queue-metrics.js';
import type { DeskAdmissionLimits } from './desk/desk-admission.js';
import type { AdmissionLimits } from './http/admission.js';
import type { HeartbeatAdmissionLimits } from './agent/heartbeat-admission.js';
import type { NodeCredentialCacheLimits } from './auth/node-credential-cache.js';
import type { LivenessWriterOptions } from './agent/liveness-writer.js';

/** A named readiness probe; `/readyz` is green only when every probe resolves. */
export interface ReadinessProbe {
  name: string;
  check: () => Promise<void>;
}

/** What the API needs from the process that hosts it (apps/server wires these). */
export interface ApiDeps {
  logger: Logger;
  readiness: ReadinessProbe[];
  /** The ledger database. Without it only the health routes are served. */
  pool?: pg.Pool;
  /** Defaults to a ledger over `pool` with the API's inline projections. */
  ledger?: Ledger;
  /** The clock; injectable so expiry rules are testable without sleeping. */
  now?: () => Date;
  /** Per-credential rate limit. @defaultValue 1200 requests per minute */
  rateLimit?: { max: number; timeWindowMs: number };
  /** What agents are told about heartbeats. @defaultValue 5 s, 3 misses */
  agent?: AgentSettings;
  /**
   * Failed authentications allowed per client address; past it, the address is refused before any lookup
   * until the window ends. @defaultValue 60 per minute
   */
  authFailureLimit?: { max: number; timeWindowMs: number };
  /** Desk telemetry queries computed at once, and waiting, per process. @defaultValue 2 at once, 8 waiting */
  deskAdmission?: DeskAdmissionLimits;
  /** Audit replays computed at once, and waiting, per process. @defaultValue 2 at once, 4 waiting */
  replayAdmission?: AdmissionLimits;
  /** `/metrics` scrapes computed at once, and waiting, per process. @defaultValue 1 at once, 4 waiting */
  metricsAdmission?: AdmissionLimits;
  /** Heartbeats held at once per process; beyond it they are shed with 429. @defaultValue 512 */
  heartbeatAdmission?: HeartbeatAdmissionLimits;
  /** How the heartbeats' liveness writes are gathered into statements. @defaultValue statements at least 5 ms apart unless 256 beats wait, two at once */
  livenessWriter?: Partial<LivenessWriterOptions>;
  /** Verified node credentials kept per process. @defaultValue 100,000 for 60 s */
  nodeCredentialCache?: NodeCredentialCacheLimits;
  /** The queue backend and the workers' job catalogs, for queue depths and job durations on /metrics. */
  queues?: QueueSource;
  /**
   * Proves a run's checkpoint storage usable at the confirmation request (a driver for its scheme; a marker
   * written, read back and deleted), throwing an ItoError otherwise. The server always wires it; without it (the
   * in-process API of some tests) only the tenant policy is checked.
   */
  checkpointStorage?: (prefix: string) => Promise<void>;
  /**
   * Told of every answer whose status or error code the OpenAPI document does not list for its route. Unset in
   * production; the test servers set it, so every test of the API also checks its document.
   */
  onUndocumentedAnswer?: (violation: string) => void;
}
