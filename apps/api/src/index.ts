export { buildApp, BODY_LIMIT_BYTES } from './app.js';
export type { ApiDeps, ReadinessProbe } from './deps.js';
