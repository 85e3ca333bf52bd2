import { sql } from 'drizzle-orm';
import { bigint, customType, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

/** PostgreSQL's 64-bit, epoch-extended transaction id (`pg_current_xact_id()`); read back as a decimal string. */
const xid8 = customType<{ data: string; driverData: string }>({
  dataType: () => 'xid8',
});

/**
 * The event log: the only source of truth.
 *
 * Rules:
 * - Append only. A stored row is never updated or deleted; old shapes are upcast on read (`schema_version`).
 * - `(stream_id, stream_version)` is unique: two writers that both expected the same version cannot both win.
 * - `position` is assigned at insert, so it is NOT commit order. Readers use `(transaction_id, position)` below
 *   `pg_snapshot_xmin(pg_current_snapshot())`, which never skips an event whose transaction commits late.
 * - `content_hash` is sha256 of the canonical JSON of the fields the writer knows (tenant, stream, type, schema
 *   version, data, metadata, recorded_at); `event_chain` links it, with position, version and transaction id.
 */
export const events = pgTable(
  'events',
  {
    position: bigint('position', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    streamId: text('stream_id').notNull(),
    streamVersion: integer('stream_version').notNull(),
    tenantId: text('tenant_id').notNull(),
    type: text('type').notNull(),
    schemaVersion: integer('schema_version').notNull().default(1),
    data: jsonb('data').notNull(),
    metadata: jsonb('metadata').notNull().default(sql`'{}'::jsonb`),
    recordedAt: timestamp('recorded_at', { withTimezone: true, precision: 3 }).notNull(),
    transactionId: xid8('transaction_id').notNull().default(sql`pg_current_xact_id()`),
    contentHash: text('content_hash').notNull(),
  },
  (t) => [
    uniqueIndex('events_stream_version_uq').on(t.streamId, t.streamVersion),
    index('events_safe_order_idx').on(t.transactionId, t.position),
  ],
);

/**
 * The hash chain, written by the sealer after commit, in safe order, one row per event.
 *
 * Rules:
 * - `seq` is gap free from 1; `prev_hash` is the previous row's `hash` (null for seq 1).
 * - `hash` = sha256 over canonical JSON of {seq, position, transactionId, streamVersion, contentHash, prevHash}.
 * - Insert only, by one sealer at a time (advisory lock). `transaction_id` is copied so the sealer can resume
 *   its `(transaction_id, position)` cursor without touching the events it has already sealed.
 */
export const eventChain = pgTable(
  'event_chain',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey(),
    position: bigint('position', { mode: 'number' }).notNull(),
    transactionId: xid8('transaction_id').notNull(),
    prevHash: text('prev_hash'),
    hash: text('hash').notNull(),
    sealedAt: timestamp('sealed_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('event_chain_position_uq').on(t.position)],
);

/**
 * One hash chain per tenant, beside the global one, so a tenant's events can be exported and verified without
 * any other tenant's: written by the sealer, following `event_chain` in `seq` order (so links sealed before this
 * table existed are chained on the sealer's next pass, and the global chain is untouched).
 *
 * Rules:
 * - `(tenant_id, tenant_seq)` is gap free from 1 per tenant; `prev_hash` is the tenant's previous `hash`.
 * - `hash` = sha256 over canonical JSON of {tenantId, tenantSeq, position, streamVersion, contentHash, prevHash}.
 * - `seq` is the global link this one follows: the tenants' heads as of any global link are the rows with the
 *   highest `tenant_seq` at or below it, which the published digests fold into one root (docs/audit.md).
 * - Insert only, under the sealer's advisory lock.
 */
export const tenantChain = pgTable(
  'tenant_chain',
  {
    tenantId: text('tenant_id').notNull(),
    tenantSeq: bigint('tenant_seq', { mode: 'number' }).notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    position: bigint('position', { mode: 'number' }).notNull(),
    prevHash: text('prev_hash'),
    hash: text('hash').notNull(),
  },
  (t) => [
    primaryKey({ name: 'tenant_chain_pk', columns: [t.tenantId, t.tenantSeq] }),
    uniqueIndex('tenant_chain_seq_uq').on(t.seq),
    uniqueIndex('tenant_chain_position_uq').on(t.position),
  ],
);

/**
 * Idempotency keys: one row per (tenant, key), written in the same transaction as the events the request
 * produced, so a key exists if and only if its effects do. `fingerprint` identifies the request; the same key
 * with another fingerprint is a reuse, never a replay.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    tenantId: text('tenant_id').notNull(),
    key: text('key').notNull(),
    fingerprint: text('fingerprint').notNull(),
    result: jsonb('result').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: 'idempotency_keys_pk', columns: [t.tenantId, t.key] })],
);

/**
 * Where each async projection has got to: the last applied event's position (0 = nothing yet).
 * Advanced only by a compare-and-set UPDATE in the same transaction that applies the batch.
 */
export const projectionCheckpoints = pgTable('projection_checkpoints', {
  name: text('name').primaryKey(),
  position: bigint('position', { mode: 'number' }).notNull().default(0),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
