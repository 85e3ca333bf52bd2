/**
 * The API's write side for the other roles that change runs (the stage workers): the ledger with the inline
 * projections every writer must keep, the locked change of a run, and the reads those changes need. Loads no
 * HTTP code, so a worker-only process stays small.
 */
export { createApiLedger, INLINE_PROJECTIONS } from './services/admin-service.js';
export { changeRun, appendRunEvents } from './services/run-writer.js';
export { getRun, getBooking, getManifestBody, getTenantPolicy, freeLiveNodes, type RunRow } from './db/queries.js';
export { planFor, type PlanOutcome } from './services/plan-service.js';
export { checkManifestOnce } from './services/accepted-manifests.js';
export { RUN_EVENTS_CHANNEL } from './projections/runs-projection.js';
