export { canonicalJson, sha256Hex } from './canonical-json.js';
export { migrationsFolder, migrateDatabase } from './migrate.js';
export { VersionConflictError } from './errors.js';
export { createLedger, type CreateLedgerOptions } from './ledger.js';
export { findIdempotencyResult } from './idempotency.js';
export { contentHash, linkHash, type ChainLink, type EventContent } from './hashing.js';
export type {
  AppendOptions,
  AppendResult,
  AsyncProjection,
  ChainHead,
  EventMetadata,
  ExpectedVersion,
  IdempotencyBegin,
  IdempotencyClaim,
  IdempotentTransactionOutcome,
  IdempotencyTx,
  InlineProjection,
  Ledger,
  LedgerTx,
  NewEvent,
  RebuildableProjection,
  StoredEvent,
  Upcaster,
  VerifyResult,
} from './types.js';
export * as ledgerSchema from './schema.js';
export { listen, type PgListener, type ListenHandlers } from './listen.js';
