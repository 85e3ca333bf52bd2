import type pg from 'pg';
import type { Logger } from '@ito/config';
import type { Ledger } from '@ito/ledger';
import type { AssignmentNotifier } from './agent/assignment-notifier.js';
import type { AgentSettings } from './agent/agent-settings.js';
import type { LivenessWriter } from './agent/liveness-writer.js';
import type { WindowCounter } from './http/window-counter.js';
import type { OperationsMetrics } from './metrics/operations-metrics.js';
import type { DeskAdmission } from './desk/desk-admission.js';
import type { ApiDeps } from './deps.js';
import type { Admission } from './http/admission.js';
import type { NodeCredentialCache } from './auth/node-credential-cache.js';

/**
 * The one explicit resources object every service shares: database, ledger, logger and clock.
 * The clock is injectable so expiry rules are testable without sleeping. `authFailures` counts failed
 * authentications per client address, shared by every route.
 */
export interface Resources {
  pool: pg.Pool;
  ledger: Ledger;
  logger: Logger;
  now: () => Date;
  /** How agents are told to pace their heartbeats. */
  agent: AgentSettings;
  /** Wakes agents' long polls when their node's tasks change. */
  assignments: AssignmentNotifier;
  /** Batches heartbeats into the liveness table. */
  liveness: LivenessWriter;
  authFailures: WindowCounter;
  /** Node credentials this process verified, dropped when a revocation is announced. */
  nodeCredentials: NodeCredentialCache;
  /** Sheds heartbeats beyond what this process holds at once. */
  heartbeats: Admission;
  /** Counters the services feed for /metrics. */
  metrics: Pick<OperationsMetrics, 'heartbeatsIngested'>;
  /** Admits desk telemetry queries a few at a time, so they cannot take the pool from everything else. */
  desk: DeskAdmission;
  /** See {@link ApiDeps.checkpointStorage}. */
  checkpointStorage?: (prefix: string) => Promise<void>;
  /** Admits audit replays a few at a time, for the same reason. */
  replay: Admission;
}
