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

/**
 * What a stream holds: each event type mapped to the shape of its data (a run stream's map is the domain's
 * RunEventMap). Appends and projections typed with a map take and see only those events, `data` narrowed by
 * `type`, with no cast; the untyped default takes any type and any JSON object.
 */
export type EventMap = object;
/** Any type, any JSON object: what a stream without a map of its own takes. */
export type UntypedEvents = Record<string, Record<string, unknown>>;
/**
 * Some map or other: what the ledger's own lists and entry points hold (the inline projections, each of its own
 * map). `any` is how TypeScript says "some map" here; the ledger hands a projection only the types it handles, so
 * each still sees only its own events.
 */
export type AnyEvents = any;
/** The event types of map `M`. */
export type TypeOf<M extends EventMap> = keyof M & string;

/** One event of map `M` to append: `data` is the shape its `type` names. */
export type NewEventOf<M extends EventMap> = {
  [K in TypeOf<M>]: {
    type: K;
    data: M[K];
    /** @defaultValue 1 */
    schemaVersion?: number;
    metadata?: EventMetadata;
  };
}[TypeOf<M>];

export type NewEvent = NewEventOf<UntypedEvents>;

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

/** A stored event of map `M`: `data` narrowed by `type`. */
export type StoredEventOf<M extends EventMap> = { [K in TypeOf<M>]: StoredEvent<M[K]> & { type: K } }[TypeOf<M>];

/** 'no_stream': the stream must not exist; 'any': no check; a number: the exact current version. */
export type ExpectedVersion = 'no_stream' | 'any' | number;

export interface AppendOptions {
  tenantId: string;
  expectedVersion: ExpectedVersion;
}

export interface AppendResult<M extends EventMap = UntypedEvents> {
  nextExpectedVersion: number;
  /** What was written: the events handed in and any the stream's rule added. */
  events: StoredEventOf<M>[];
}

/** One stream's part of a multi-stream append: its events (of its map `M`) and its own expectation. */
export interface StreamAppend<M extends EventMap = UntypedEvents> {
  streamId: string;
  events: readonly NewEventOf<M>[];
  opts: AppendOptions;
}

/** What a multi-stream append wrote: one result per stream, in the order given, each typed with its stream's map. */
export type AppendResults<T extends readonly StreamAppend<AnyEvents>[]> = {
  -readonly [K in keyof T]: T[K] extends StreamAppend<infer M extends EventMap> ? AppendResult<M> : AppendResult;
};

/** Lifts `data` of one event type from `fromVersion` to `fromVersion + 1`; upcasters chain on read. */
export interface Upcaster {
  type: string;
  fromVersion: number;
  upcast(data: Record<string, unknown>): Record<string, unknown>;
}

/**
 * Runs inside the appending transaction, so a command can read its own write. Typed with the map of the events it
 * handles (`handles` lists exactly that map's types), it sees them with `data` narrowed by `type`.
 */
export interface InlineProjection<M extends EventMap = UntypedEvents> {
  name: string;
  /** Event types it applies; all when omitted (then its map must be the untyped one). */
  handles?: TypeOf<M>[];
  apply(client: pg.PoolClient, events: StoredEventOf<M>[]): Promise<void>;
}

/** What an async projection's `fold` made of a batch: its writes, and what the next batch's fold starts from. */
export interface FoldedBatch {
  /** Runs in the batch's transaction, after its checkpoint's compare-and-set. */
  write(client: pg.PoolClient): Promise<void>;
  /** Handed to the next batch's fold in the same catch-up (opaque to the ledger). */
  carry: unknown;
}

/** Runs behind the log in its own transactions, from a checkpoint. */
export interface AsyncProjection<M extends EventMap = UntypedEvents> {
  name: string;
  handles?: TypeOf<M>[];
  /**
   * Set when the projection reads only its events' position, type, schema version, data and recorded time: its
   * runners then read only those columns, and hand over events whose stream, version, tenant, metadata and
   * transaction id are empty ('', 0, {}). Each runner (batch, rebuild, catch-up) reads it the same way.
   */
  payloadsOnly?: boolean;
  /**
   * Set when every write the projection makes reaches its rows by a key: each runner then plans the batch's
   * transaction by indexes (batch-transaction.ts), which keeps a catch-up into tables never analysed linear.
   */
  keyedWrites?: boolean;
  apply(client: pg.PoolClient, events: StoredEventOf<M>[]): Promise<void>;
  /**
   * Optional: `apply` cut in two, so a catch-up folds batch N+1 in the process while batch N is written in the
   * database. It runs outside the batch's transaction and reads through `db` (committed rows only). When it runs,
   * every batch before the previous one is committed; the previous one may still be in flight, and its effects
   * are what its fold returned as `carry` (`carried`; null when every batch before is committed). It returns null
   * when it cannot fold without the previous batch committed: it is called again once it is, with null.
   */
  fold?(db: pg.Pool, events: StoredEventOf<M>[], carried: unknown): Promise<FoldedBatch | null>;
  /** Empties the projection's tables so it can be rebuilt from position 0. */
  reset(client: pg.PoolClient): Promise<void>;
}

/**
 * The rule of a family of streams (a run's, say): every append to a stream it owns passes through `complete`,
 * inside the appending transaction and before the events are written, whoever appends. The ledger first refuses
 * an event whose type is not in `types`; `complete` may refuse the append too (throw), or add the events its rule
 * calls for: what it returns is what is written.
 */
export interface StreamRule<M extends EventMap = UntypedEvents> {
  name: string;
  types: readonly TypeOf<M>[];
  owns(streamId: string): boolean;
  complete(client: pg.PoolClient, streamId: string, events: readonly NewEventOf<M>[], opts: AppendOptions): Promise<NewEventOf<M>[]>;
}

export type RebuildableProjection = AsyncProjection<AnyEvents> | (InlineProjection<AnyEvents> & { reset(client: pg.PoolClient): Promise<void> });

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
  append<M extends EventMap = UntypedEvents>(streamId: string, events: readonly NewEventOf<M>[], opts: AppendOptions): Promise<AppendResult<M>>;
  /**
   * Appends to several streams in one statement, each with its own expected version, with the meaning of the same
   * appends made one after another in this transaction (the same conflicts and errors, each stream's rule applied),
   * except that a refusal writes nothing at all. The stream rules run first, in order; then the one INSERT; then
   * each inline projection once, on the events of every stream it handles, in the order given.
   */
  appendMany<const T extends readonly StreamAppend<AnyEvents>[]>(appends: T): Promise<AppendResults<T>>;
  idempotency: IdempotencyTx;
}

export interface Ledger {
  /** One round trip when no inline projection handles these types; else a transaction that also runs them. */
  append<M extends EventMap = UntypedEvents>(streamId: string, events: readonly NewEventOf<M>[], opts: AppendOptions): Promise<AppendResult<M>>;
  /** `LedgerTx.appendMany` on its own: one autocommit statement when no rule or inline projection is involved. */
  appendMany<const T extends readonly StreamAppend<AnyEvents>[]>(appends: T): Promise<AppendResults<T>>;
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
  runProjection(p: AsyncProjection<AnyEvents>, opts?: { batchSize?: number }): Promise<number>;
  /**
   * Applies batches until the log's head or until `stop` answers true, reading the next batch while the current one
   * is written (two connections), and for a projection with a `fold`, folding it then too (its reads borrow a third
   * from the pool); each batch is its own transaction, exactly as `runProjection`'s.
   */
  catchUpProjection(p: AsyncProjection<AnyEvents>, opts?: { batchSize?: number; stop?: () => boolean }): Promise<{ applied: number; caughtUp: boolean }>;
  /** Resets the projection and replays it from position 0; returns how many events it applied. */
  rebuild(p: RebuildableProjection, opts?: { batchSize?: number }): Promise<number>;
}
