export { startEmbeddedPostgres, type EmbeddedPostgres, type StartEmbeddedOptions } from './embedded-postgres.js';
export { readEmbeddedConnection } from './connection.js';
export { embeddedDataDir, sidecarPaths } from './files.js';
export { SERVICE_USER } from './identity.js';
export type { EmbeddedLogger } from './logger.js';
