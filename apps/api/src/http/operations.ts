import type { ErrorCode } from '@ito/contracts';

/**
 * What the OpenAPI document says about each operation beyond its schemas, in one table keyed by `METHOD /path`
 * (Fastify's `:param` syntax), so a route added anywhere needs one line here and nothing else in this file
 * changes: the server refuses to start when a served route has no row, a row names no served route, or two
 * rows share an operationId.
 *
 * - `operationId` is stable: generated clients name their methods after it. It is the CLI verb in camelCase
 *   where a verb calls the route (`train`, `status`, `confirmApprove`), else a name of the same style.
 * - `refusals` are the codes only this route's own gates raise. The codes every route of its kind can answer
 *   (credentials and scope, path, query and body validation, Idempotency-Key, rate limits, internal errors)
 *   are added from the route's declaration by `refusalsOf`, so they are never forgotten here.
 * - `success` is the statuses of an answer with ok true when it is not only 200.
 */
export interface OperationDoc {
  operationId: string;
  refusals?: readonly ErrorCode[];
  success?: readonly number[];
}

/** Gate 3 of train and every inspection of a booking (docs/design.md, "The gates of train"). */
const BOOKING_USABLE = ['booking_not_found', 'booking_not_started', 'booking_expired', 'booking_revoked', 'booking_released', 'booking_incomplete'] as const;
/** What the server finds in a manifest's bytes. */
const MANIFEST = ['manifest_invalid', 'manifest_contains_secret', 'manifest_digest_mismatch'] as const;
/** The planner's refusals. */
const PLAN = ['plan_refused', 'capacity_insufficient', 'fabric_unsupported'] as const;
/**
 * The tenant's policy on data (a `file://` ref outside its file roots is `data_ref_not_permitted`) and checkpoint
 * storage, and the manifest's own spending limits.
 */
const POLICY = ['data_policy_violation', 'data_ref_not_permitted', 'checkpoint_storage_invalid', 'budget_exceeded', 'incremental_cost_exceeded'] as const;
/** Using a confirmation reference: missing, unknown, or not (or no longer) allowing this exact call. */
const CONFIRMATION_USE = [
  'confirmation_required',
  'confirmation_not_found',
  'confirmation_pending',
  'confirmation_denied',
  'confirmation_expired',
  'confirmation_consumed',
  'confirmation_mismatch',
  'confirmation_locked',
] as const;
/** Deciding a confirmation: unknown, no longer pending, or expired (the requester deciding it is `forbidden`). */
const CONFIRMATION_DECISION = ['confirmation_not_found', 'invalid_state', 'confirmation_expired'] as const;
/** A run lookup by id: another tenant's run is not found either. */
const RUN = ['not_found'] as const;
/** A node's report about a task: not its own task, or not the task's current attempt (the answer says stop). */
const TASK = ['not_found', 'invalid_state'] as const;

export const OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  'GET /': { operationId: 'serviceIndex' },
  'GET /healthz': { operationId: 'health' },
  'GET /readyz': { operationId: 'readiness' },
  'GET /metrics': { operationId: 'prometheusMetrics' },
  'GET /v1/healthz': { operationId: 'healthV1' },
  'GET /v1/readyz': { operationId: 'readinessV1' },
  'GET /v1/metrics': { operationId: 'prometheusMetricsV1' },
  'GET /openapi.json': { operationId: 'openapiAtRoot' },
  'GET /v1/openapi.json': { operationId: 'openapi' },
  'GET /v1/schemas/manifest.json': { operationId: 'manifestSchema' },
  'GET /desk': { operationId: 'deskPage' },
  'GET /desk/dashboard.js': { operationId: 'deskScript' },
  'GET /desk/dashboard.css': { operationId: 'deskStyles' },
  'GET /desk/uplot.js': { operationId: 'deskChartScript' },
  'GET /desk/uplot.css': { operationId: 'deskChartStyles' },

  'GET /v1/auth/whoami': { operationId: 'auth' },
  'POST /v1/auth/logout': { operationId: 'logout' },

  'GET /v1/bookings': { operationId: 'bookingsList' },
  'GET /v1/bookings/:id': { operationId: 'bookingsShow', refusals: ['booking_not_found'] },
  'POST /v1/bookings/:id/eligibility': { operationId: 'eligibility', refusals: [...BOOKING_USABLE, 'booking_mismatch'] },
  // The policy gates too: a plan the server would refuse at the confirmation says so, with the findings.
  'POST /v1/plans': { operationId: 'plan', refusals: [...BOOKING_USABLE, ...MANIFEST, ...PLAN, ...POLICY] },

  // The storage probe (a marker written, read back, cleared) runs here only, before an approver is asked: a store
  // that does not answer is `checkpoint_storage_unreachable`. `invalid_state`: the action cannot apply to its run.
  'POST /v1/confirmations': {
    operationId: 'confirmRequest',
    success: [201],
    refusals: [...BOOKING_USABLE, ...MANIFEST, ...PLAN, ...POLICY, 'eval_battery_not_registered', 'checkpoint_storage_unreachable', 'not_found', 'invalid_state'],
  },
  'GET /v1/confirmations/:ref': { operationId: 'confirmShow', refusals: ['confirmation_not_found'] },
  'POST /v1/confirmations/:ref/approve': { operationId: 'confirmApprove', refusals: CONFIRMATION_DECISION },
  'POST /v1/confirmations/:ref/deny': { operationId: 'confirmDeny', refusals: CONFIRMATION_DECISION },

  // 201 for a new run, 200 for the replayed answer of a key that already created one.
  'POST /v1/runs': {
    operationId: 'train',
    success: [200, 201],
    refusals: [...BOOKING_USABLE, 'eligibility_stale', ...MANIFEST, ...CONFIRMATION_USE, ...POLICY, ...PLAN],
  },
  'GET /v1/runs': { operationId: 'runsList' },
  'GET /v1/runs/:id': { operationId: 'status', refusals: RUN },
  'GET /v1/runs/:id/events': { operationId: 'events', refusals: RUN },
  'GET /v1/runs/:id/logs': { operationId: 'logs', refusals: RUN },
  'GET /v1/runs/:id/metrics': { operationId: 'metrics', refusals: RUN },
  'GET /v1/runs/:id/checkpoints': { operationId: 'checkpoints', refusals: RUN },
  'POST /v1/runs/:id/cancel': { operationId: 'cancel', refusals: [...RUN, ...CONFIRMATION_USE, 'invalid_state'] },
  'POST /v1/runs/:id/cleanup': { operationId: 'cleanup', refusals: [...RUN, ...CONFIRMATION_USE, 'invalid_state'] },
  'POST /v1/runs/:id/restart': { operationId: 'restart', refusals: [...RUN, ...CONFIRMATION_USE, 'invalid_state'] },

  'GET /v1/desk/telemetry': { operationId: 'deskTelemetry' },

  'GET /v1/audit/events': { operationId: 'auditEvents' },
  'GET /v1/audit/digest': { operationId: 'auditDigest' },
  'GET /v1/audit/replay': { operationId: 'auditReplay', refusals: ['not_found'] },

  'POST /v1/agent/register': { operationId: 'agentRegister' },
  // Beyond the beats one process holds at once it sheds with `rate_limited` (429, Retry-After), listed by refusalsOf.
  'POST /v1/agent/heartbeat': { operationId: 'agentHeartbeat', refusals: ['rate_limited'] },
  // Sheds a batch whole when its beats do not fit in what the process holds; a refused beat's credential is its own answer, not a refusal.
  'POST /v1/agent/heartbeats': { operationId: 'agentHeartbeats', refusals: ['rate_limited'] },
  'GET /v1/agent/assignments': { operationId: 'agentAssignments' },
  'POST /v1/agent/tasks/:id/progress': { operationId: 'agentReportProgress', refusals: TASK },
  'POST /v1/agent/tasks/:id/checkpoint': { operationId: 'agentReportCheckpoint', refusals: TASK },
  'POST /v1/agent/tasks/:id/restored': { operationId: 'agentReportRestored', refusals: TASK },
  'POST /v1/agent/tasks/:id/complete': { operationId: 'agentReportComplete', refusals: TASK },
  'POST /v1/agent/tasks/:id/fail': { operationId: 'agentReportFail', refusals: TASK },
  'POST /v1/agent/tasks/:id/rollouts': { operationId: 'agentPostRollouts', refusals: TASK },
  'GET /v1/agent/tasks/:id/rollouts': { operationId: 'agentPollRollouts', refusals: TASK },
  'POST /v1/agent/tasks/:id/policy': { operationId: 'agentPublishPolicy', refusals: TASK },
};
