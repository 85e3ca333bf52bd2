export { buildApp, BODY_LIMIT_BYTES, API_VERSION } from './app.js';
export type { ApiDeps, ReadinessProbe } from './deps.js';
export { auditProjections } from './audit/audit-projections.js';
