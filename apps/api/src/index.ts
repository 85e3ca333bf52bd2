export { buildApp, BODY_LIMIT_BYTES, API_VERSION } from './app.js';
export type { ApiDeps, ReadinessProbe } from './deps.js';
export { createAdminService, createApiLedger, INLINE_PROJECTIONS, REQUESTER_SCOPES, APPROVER_SCOPES, type AdminService } from './services/admin-service.js';
export { hashSecret } from './auth/credentials.js';
export { auditProjections } from './audit/audit-projections.js';
