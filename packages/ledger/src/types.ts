import type pg from 'pg';

/** Who and what caused an event. Free-form beyond the named keys, always JSON. */
export interface EventMetadata {
  actor?: string;
  requestId?: string;
  causationId?: string;
  correlationId?: string;
  idempotencyKey?: string;
  [k: string]: unknown;
}

export interface NewEvent {
  type: string;
  data: Record<string, unknown>;
  /** @defaultValue 1 */
  schemaVersion?: number;
  metadata?: EventMetadata;
}

export interface StoredEvent<T = Record<string, unknown>> {
  /** Global position, assigned at insert (not commit order; see readAll). */
  position: number;
  streamId: string;
  streamVersion: number;
  tenantId: string;
  type: string;
  /** After upcasting on read: the version of `data` as handed to the caller. */
  schemaVersion: number;
  data: T;
  metadata: EventMetadata;
  recordedAt: Date;
  /** xid8 of the appending transaction, as a decimal string. */
  transactionId: string;
}

/** 'no_stream': the stream must not exist; 'any': no check; a number: the exact current version. */
export type ExpectedVersion = 'no_stream' | 'any' | number;

export interface AppendOptions {
  tenantId: string;
  expectedVersion: ExpectedVersion;
}

export interface AppendResult {
  nextExpectedVersion: number;
  events: StoredEvent[];
}

/** Lifts `data` of one event type from `fromVersion` to `fromVersion + 1`; upcasters chain on read. */
export interface Upcaster {
  type: string;
  fromVersion: number;
  upcast(data: Record<string, unknown>): Record<string, unknown>;
}

/** Runs inside the appending transaction, so a command can read its own write. */
export interface InlineProjection {
  name: string;
  /** Event types it applies; all when omitted. */
  handles?: string[];
  apply(client: pg.PoolClient, events: StoredEvent[]): Promise<void>;
}

/** Runs behind the log in its own transactions, from a checkpoint. */
export interface AsyncProjection {
  name: string;
  handles?: string[];
  apply(client: pg.PoolClient, events: StoredEvent[]): Promise<void>;
  /** Empties the projection's tables so it can be rebuilt from position 0. */
  reset(client: pg.PoolClient): Promise<void>;
}

export type RebuildableProjection = AsyncProjection | (InlineProjection & { reset(client: pg.PoolClient): Promise<void> });

export type VerifyResult =
  | { ok: true; checked: number; headHash: string | null }
  | { ok: false; checked: number; firstBadPosition: number; reason: string };

export interface ChainHead {
  position: number | null;
  hash: string | null;
  count: number;
}

export type IdempotencyBegin = { kind: 'new' } | { kind: 'replay'; result: unknown } | { kind: 'mismatch' } | { kind: 'in_progress' };

export interface IdempotencyTx {
  /**
   * Takes pg_try_advisory_xact_lock on (tenant, key): not acquired means another transaction holds the key
   * (in_progress). Otherwise a completed row with the same fingerprint replays its result, another fingerprint
   * is a mismatch, and no row means the request is new.
   */
  begin(tenantId: string, key: string, fingerprint: string): Promise<IdempotencyBegin>;
  /** Writes the key's row in this same transaction: it exists if and only if the events do. */
  complete(tenantId: string, key: string, fingerprint: string, result: unknown): Promise<void>;
}

/** Who claims an idempotency key: the tenant, the key and the fingerprint of the request. */
export interface IdempotencyClaim {
  tenantId: string;
  key: string;
  fingerprint: string;
}

/** 'done': the work ran and its result was recorded under the key; the other kinds are `begin`'s, nothing ran. */
export type IdempotentTransactionOutcome<T> =
  | { kind: 'done'; result: T }
  | { kind: 'replay'; result: unknown }
  | { kind: 'mismatch' }
  | { kind: 'in_progress' };

export interface LedgerTx {
  /** Raw queries inside the same transaction. */
  client: pg.PoolClient;
  append(streamId: string, events: NewEvent[], opts: AppendOptions): Promise<AppendResult>;
  idempotency: IdempotencyTx;
}

export interface Ledger {
  /** One round trip when no inline projection handles these types; else a transaction that also runs them. */
  append(streamId: string, events: NewEvent[], opts: AppendOptions): Promise<AppendResult>;
  /** BEGIN … COMMIT; rolls back when fn throws. */
  transaction<T>(fn: (tx: LedgerTx) => Promise<T>): Promise<T>;
  /**
   * `transaction` + `idempotency.begin` + `idempotency.complete` with the same meaning, in two round trips of
   * its own instead of five: BEGIN with the key's lock and its row, then the result's row with the COMMIT.
   * `work` runs only for a new key; when it throws, everything rolls back, key included.
   */
  idempotentTransaction<T>(claim: IdempotencyClaim, work: (tx: LedgerTx) => Promise<T>): Promise<IdempotentTransactionOutcome<T>>;
  readStream(streamId: string, opts?: { tenantId?: string; fromVersion?: number }): Promise<StoredEvent[]>;
  /** Safe global order: every event is seen once, and none committed late is ever skipped. */
  readAll(opts?: { after?: number; limit?: number; tenantId?: string }): Promise<StoredEvent[]>;
  verify(): Promise<VerifyResult>;
  chainHead(): Promise<ChainHead>;
  /** Extends the hash chain over committed events; returns how many it sealed. Safe to call concurrently. */
  sealPending(opts?: { batchSize?: number }): Promise<number>;
  /** Applies one batch after the projection's checkpoint; returns how many events it applied (0 = caught up). */
  runProjection(p: AsyncProjection, opts?: { batchSize?: number }): Promise<number>;
  /** Resets the projection and replays it from position 0; returns how many events it applied. */
  rebuild(p: RebuildableProjection, opts?: { batchSize?: number }): Promise<number>;
}
