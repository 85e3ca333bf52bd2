
export { migrationsFolder, migrateDatabase } from './migrate.js';
export { VersionConflictError } from './errors.js';
export { createLedger, type CreateLedgerOptions } from './ledger.js';
export { MAX_STREAMS_PER_APPEND } from './append-many.js';
export { findIdempotencyResult } from './idempotency.js';
export type { ChainLink, EventContent } from './hashing.js';
export type {
  AnyEvents,
  AppendOptions,
  AppendResult,
  AsyncProjection,
  FoldedBatch,
  ChainHead,
  EventMap,
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
  NewEventOf,
  RebuildableProjection,
  StoredEvent,
  StoredEventOf,
  StreamAppend,
  AppendResults,
  StreamRule,
  UntypedEvents,
  Upcaster,
  VerifyResult,
} from './types.js';
export * as ledgerSchema from './schema.js';
export { listen, type PgListener, type ListenHandlers } from './listen.js';
export * from './audit.js';
export {
  AUDIT_DIGEST_EVENT,
  AUDIT_DIGEST_STREAM,
  SYSTEM_TENANT,
  anchorFor,
  currentDigest,
  latestPublishedDigest,
  publishDigest,
  readTenantRecords,
  tenantHeadsAt,
  verifyTenantChain,
  verifyTenantChainSince,
  type TenantSinceDigestVerdict,
} from './audit-read.js';
export { verifyChain, type SinceDigestResult, type VerifyChainOptions } from './verify.js';
export type { WalkOptions } from './chain-walk/walk.js';
export { ProjectionRegistry, replayProjections, type AsOf, type FieldDifference, type ReplayOptions, type ReplayResult, type ReplayTable, type ReplayableProjection } from './replay.js';
