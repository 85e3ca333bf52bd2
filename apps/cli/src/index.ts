/** Library surface of the CLI package, for tests and for tools that embed its pieces. */
export { readManifestSafely, MANIFEST_LIMIT_BYTES, type ManifestFile, type ManifestReadHooks } from './manifest/read-manifest.js';
export { readStoredCredential, storeCredential, removeCredential, type StoredCredential } from './credentials/store.js';
export { parseArgs, type ParseResult, type ParsedCommand, type CommandTable } from './args/parse.js';
export { VERBS, GROUPS, GLOBAL_FLAGS, SECRET_FLAGS, type VerbSpec } from './args/verbs.js';
export { ADMIN_VERBS, ADMIN_GROUPS } from './args/admin-verbs.js';
export { capabilities } from './commands/capabilities.js';
