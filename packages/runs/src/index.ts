/**
 * The run write model, shared by every role that changes runs (the API, the stage workers, the monitor, the
 * operator's tool): the run ledger with its inline projections and the run streams' rule, the locked change of a
 * run, the reads those changes need, the manifest gate and the plan. Loads no HTTP code.
 */
export { createApiLedger, INLINE_PROJECTIONS } from './run-ledger.js';
export { runStreamRule } from './run-stream-rule.js';
export { changeRun, appendRunEvents, createRun, newRunAppend } from './run-writer.js';
export { processSloTargets } from './slo-targets.js';
export {
  bookingNodeLiveness,
  consumeConfirmation,
  freeLiveNodes,
  getBooking,
  getConfirmation,
  getManifestBody,
  getRun,
  getTenantPolicy,
  getTrainContext,
  listBookings,
  listRuns,
  recordFailedConfirmationUse,
  saveManifest,
  type ConfirmationRow,
  type RunRow,
  type StoredConfirmation,
} from './queries.js';
export { planFor, planOrRefusal, type PlanOutcome } from './plan-for.js';
export { checkManifest } from './manifest/manifest-gate.js';
export { checkManifestOnce } from './manifest/accepted-manifests.js';
export { RUN_EVENTS_CHANNEL, runsProjection } from './projections/runs-projection.js';
export { ASSIGNMENTS_CHANNEL, tasksProjection } from './projections/tasks-projection.js';
export { BOOKING_EVENT_TYPES, bookingRecord, bookingStreamId, bookingsProjection, type BookingEventMap } from './projections/bookings-projection.js';
export { SLO_BUCKETS, sloBucketOf, sloProjection } from './projections/slo-projection.js';
export { idToken, isId, looksLikeId, newId, type IdPrefix } from './ids.js';
export { hashSecret, isWellFormedCredential, newSecret, type CredentialKind } from './credentials.js';
export { NODE_CREDENTIALS_CHANNEL, revokeNodeCredential } from './node-credentials.js';
export { APPROVER_SCOPES, REQUESTER_SCOPES, createAdminService, type AdminService } from './admin/admin-service.js';
