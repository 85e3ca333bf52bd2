import { sql } from 'drizzle-orm';
import { bigint, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

/**
 * The API's tables. Runs and bookings are projections of their event streams (rebuilt from the ledger);
 * tenants, keys, confirmations and node credentials are written beside the events that record them, in the
 * same transaction. Every query names the tenant.
 */

/** A buyer account. `policy` holds the data and storage rules its runs are checked against. */
export const tenants = pgTable('tenants', {
  tenantId: text('tenant_id').primaryKey(),
  name: text('name').notNull(),
  policy: jsonb('policy').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * API keys are stored only as SHA-256 hashes of their secret part; the key itself is shown once at creation.
 * A key is identity, never permission to spend: scopes say what it may ask for.
 */
export const apiKeys = pgTable(
  'api_keys',
  {
    keyId: text('key_id').primaryKey(),
    tenantId: text('tenant_id').notNull().references(() => tenants.tenantId),
    secretHash: text('secret_hash').notNull(),
    scopes: text('scopes').array().notNull(),
    label: text('label'),
    /**
     * Who holds the key (a person or team name the operator gave), when known. A confirmation is never decided
     * by the principal that requested it, whichever of their keys they use.
     */
    principal: text('principal'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('api_keys_secret_hash_uq').on(t.secretHash), index('api_keys_tenant_idx').on(t.tenantId)],
);

/** Projection of the booking streams (`booking-<id>`). */
export const bookings = pgTable(
  'bookings',
  {
    bookingId: text('booking_id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    status: text('status').notNull(),
    gpu: text('gpu').notNull(),
    nodes: integer('nodes').notNull(),
    gpusPerNode: integer('gpus_per_node').notNull(),
    region: text('region').notNull(),
    fabric: text('fabric').notNull(),
    termStart: timestamp('term_start', { withTimezone: true }).notNull(),
    termEnd: timestamp('term_end', { withTimezone: true }).notNull(),
    rateUsdPerGpuHour: doublePrecision('rate_usd_per_gpu_hour').notNull(),
    nodeInventory: jsonb('node_inventory').notNull().default(sql`'[]'::jsonb`),
    version: integer('version').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('bookings_tenant_idx').on(t.tenantId, t.bookingId)],
);

/**
 * Confirmations: single-use approvals bound to account, action, booking or run, manifest digest and cost.
 * Consumed by ONE conditional UPDATE (status approved → consumed) in the transaction that performs the action,
 * so two concurrent uses cannot both succeed. `failed_uses` counts refused uses; five lock the reference.
 */
export const confirmations = pgTable(
  'confirmations',
  {
    ref: text('ref').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    action: text('action').notNull(),
    bookingId: text('booking_id'),
    runId: text('run_id'),
    manifestDigest: text('manifest_digest'),
    costUsd: doublePrecision('cost_usd').notNull(),
    maxIncrementalCostUsd: doublePrecision('max_incremental_cost_usd').notNull(),
    status: text('status').notNull(),
    requestedBy: text('requested_by').notNull(),
    /** The requesting key's principal at request time; the decider must be another key and another principal. */
    requestedByPrincipal: text('requested_by_principal'),
    decidedBy: text('decided_by'),
    decidedByPrincipal: text('decided_by_principal'),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    consumedAt: timestamp('consumed_at', { withTimezone: true }),
    consumedFor: text('consumed_for'),
    failedUses: integer('failed_uses').notNull().default(0),
    details: jsonb('details').notNull().default(sql`'{}'::jsonb`),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('confirmations_tenant_idx').on(t.tenantId, t.ref)],
);

/** Projection of the run streams (`run-<id>`): the state a command must read its own write of. */
export const runs = pgTable(
  'runs',
  {
    runId: text('run_id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    bookingId: text('booking_id').notNull(),
    state: text('state').notNull(),
    stage: text('stage'),
    manifestDigest: text('manifest_digest').notNull(),
    idempotencyKey: text('idempotency_key').notNull(),
    confirmationRef: text('confirmation_ref').notNull(),
    estimatedCostUsd: doublePrecision('estimated_cost_usd').notNull(),
    incrementalCostUsd: doublePrecision('incremental_cost_usd').notNull(),
    plan: jsonb('plan').notNull(),
    aggregate: jsonb('aggregate').notNull(),
    version: integer('version').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('runs_tenant_idx').on(t.tenantId, t.createdAt),
    uniqueIndex('runs_tenant_idempotency_uq').on(t.tenantId, t.idempotencyKey),
  ],
);

/** The manifest bytes a run was approved with, stored once per digest per tenant. */
export const manifests = pgTable(
  'manifests',
  {
    tenantId: text('tenant_id').notNull(),
    digest: text('digest').notNull(),
    body: text('body').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('manifests_tenant_digest_uq').on(t.tenantId, t.digest)],
);

/** Node credentials for ito-agent, stored as hashes; one node belongs to one booking. */
export const nodes = pgTable(
  'nodes',
  {
    nodeId: text('node_id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    bookingId: text('booking_id').notNull(),
    name: text('name').notNull(),
    credentialHash: text('credential_hash').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    lastHeartbeatAt: timestamp('last_heartbeat_at', { withTimezone: true }),
    /** What the agent said of itself when it last registered (version, executor, host); never a secret. */
    agent: jsonb('agent'),
    registeredAt: timestamp('registered_at', { withTimezone: true }),
    /** GPU health fields of the last heartbeat. */
    lastHealth: jsonb('last_health'),
    /** Set when the monitor declared the node lost during a run (that run's id), cleared when it recovers. */
    lostAt: timestamp('lost_at', { withTimezone: true }),
    lostRunId: text('lost_run_id'),
  },
  (t) => [
    uniqueIndex('nodes_credential_hash_uq').on(t.credentialHash),
    uniqueIndex('nodes_booking_name_uq').on(t.bookingId, t.name),
    index('nodes_booking_idx').on(t.tenantId, t.bookingId),
  ],
);

/**
 * Projection of the run streams' task events: one row per node's share of a stage attempt, so an agent's long
 * poll finds its work by node. Rebuildable from position 0. Task ids are derived from (run, stage, attempt,
 * rank), so a retried stage job names the same tasks. `last_seq` is the last report recorded for the task.
 */
export const tasks = pgTable(
  'tasks',
  {
    taskId: text('task_id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    runId: text('run_id').notNull(),
    bookingId: text('booking_id').notNull(),
    nodeId: text('node_id').notNull(),
    stage: text('stage').notNull(),
    attempt: integer('attempt').notNull(),
    rank: integer('rank').notNull(),
    role: text('role').notNull(),
    status: text('status').notNull(),
    lastSeq: integer('last_seq').notNull().default(0),
    spec: jsonb('spec').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('tasks_node_status_idx').on(t.nodeId, t.status), index('tasks_run_idx').on(t.runId)],
);


/**
 * RLVR's exchange (docs/pipeline.md, "Trainer and rollout"): the batches rollout tasks post, each tagged with the
 * policy version that sampled it, until the trainer takes it (accepted) or finds it too stale (rejected, with
 * its staleness). One row per (rollout task, seq), so a resent batch is stored once. Not ledger events: a run
 * posts many batches, and the ledger keeps their counts through the trainer's reports.
 */
export const rolloutBatches = pgTable(
  'rollout_batches',
  {
    batchId: text('batch_id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    runId: text('run_id').notNull(),
    stage: text('stage').notNull(),
    attempt: integer('attempt').notNull(),
    taskId: text('task_id').notNull(),
    seq: integer('seq').notNull(),
    policyVersion: integer('policy_version').notNull(),
    samples: jsonb('samples').notNull(),
    droppedGroups: integer('dropped_groups').notNull().default(0),
    /** pending, accepted or rejected. */
    status: text('status').notNull(),
    staleness: integer('staleness'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    judgedAt: timestamp('judged_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('rollout_batches_task_seq_uq').on(t.taskId, t.seq), index('rollout_batches_attempt_idx').on(t.runId, t.stage, t.attempt, t.status)],
);

/** The policy version an RLVR attempt's trainer published last, and where its weights are. */
export const rolloutPolicies = pgTable(
  'rollout_policies',
  {
    tenantId: text('tenant_id').notNull(),
    runId: text('run_id').notNull(),
    stage: text('stage').notNull(),
    attempt: integer('attempt').notNull(),
    version: integer('version').notNull(),
    uri: text('uri').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.stage, t.attempt] })],
);

// The telemetry projection's tables are in telemetry-schema.ts.

/**
 * Liveness of each node as its heartbeats say: one row per node, overwritten in batches by the API, read by
 * the monitor and by stage starts. Made UNLOGGED by the custom migration after it (drizzle cannot declare it):
 * a heartbeat is not a fact worth a WAL record, and after a database crash the table starts empty, which the
 * monitor treats as a control-plane pause (agents get one interval to beat again). The ledger records only the
 * transitions (NodeLost, TaskHung, NodeRecovered).
 *
 * `step` is the furthest step the node's running task has reached, `progress_at` when it last moved, `step_s`
 * a moving average of the seconds one step takes there: the evidence a hang is judged on. `health` is the GPU
 * list's JSON text, as `text`: written every beat and never queried into, and every writer hands it JSON the API
 * already parsed and checked (a body's own bytes, or JSON.stringify of the checked list), so PostgreSQL's `json`
 * check of the same bytes again was about a third of its CPU per beat (test/bench/README.md, heartbeats). Read it
 * as `health::json`. Fillfactor 70 (custom migration).
 */
export const nodeLiveness = pgTable('node_liveness', {
  nodeId: text('node_id').primaryKey(),
  tenantId: text('tenant_id').notNull(),
  lastHeartbeatAt: timestamp('last_heartbeat_at', { withTimezone: true }).notNull(),
  health: text('health'),
  taskId: text('task_id'),
  attempt: integer('attempt'),
  step: integer('step'),
  progressAt: timestamp('progress_at', { withTimezone: true }),
  stepS: doublePrecision('step_s'),
});

/**
 * One row per singleton role (the SLO monitor): who holds it, until when (the database's clock), and a fencing
 * token that grows on every change of holder. Every write the holder makes checks its token in the same
 * transaction, so a paused holder that lost the lease cannot act on stale judgement. No advisory lock: this
 * works through a transaction-pooling proxy.
 */
export const roleLeases = pgTable('role_leases', {
  role: text('role').primaryKey(),
  holder: text('holder').notNull(),
  token: integer('token').notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  renewedAt: timestamp('renewed_at', { withTimezone: true }).notNull(),
});

/**
 * The SLO latency histograms, kept as counts (projected from `RunResumed`): per tenant, latency (`detection` or
 * `resume`), incident kind and bucket (the index of its upper bound in SLO_BUCKETS, the last one +Inf), how many
 * incidents fell in that bucket and the sum of their latencies. /metrics reads these few rows, never a row per
 * incident, however long the history.
 */
export const sloLatencyCounts = pgTable(
  'slo_latency_counts',
  {
    tenantId: text('tenant_id').notNull(),
    latency: text('latency').notNull(),
    incidentKind: text('incident_kind').notNull(),
    bucket: integer('bucket').notNull(),
    count: bigint('count', { mode: 'number' }).notNull(),
    sumS: doublePrecision('sum_s').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.latency, t.incidentKind, t.bucket] })],
);

/** `SloBreached` events counted per tenant, SLO and bound. */
export const sloBreachCounts = pgTable(
  'slo_breach_counts',
  {
    tenantId: text('tenant_id').notNull(),
    slo: text('slo').notNull(),
    bound: text('bound').notNull(),
    count: bigint('count', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.slo, t.bound] })],
);
