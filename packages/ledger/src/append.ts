import type pg from 'pg';
import { VersionConflictError } from './errors.js';
import { contentHash } from './hashing.js';
import type { AppendOptions, AppendResult, NewEvent, StoredEvent } from './types.js';
import { validateAppend } from './validate.js';

/**
 * The whole append is one statement, sent as one round trip, with the events as one jsonb array parameter:
 * it inserts every event or none. Which statement depends on the expectation, so the common cases do no
 * more work than they need:
 * - no_stream: insert versions 1..n. An existing stream (of any tenant) already holds version 1, so
 *   events_stream_version_uq refuses the insert: no read of the stream at all.
 * - exact N: insert N+1..N+n only if version N exists for this tenant; a stream already past N holds N+1 and
 *   the unique index refuses. (N = 0 is no_stream.)
 * - any: read the head, check the tenant, insert after it; a racing writer loses on the unique index.
 * Named, so each connection parses and plans each statement once.
 */
const INPUT_CTE = `input as (
  select t.ord::int as ord, t.e->>'type' as type, (t.e->>'schemaVersion')::int as schema_version,
         t.e->'data' as data, t.e->'metadata' as metadata, t.e->>'contentHash' as content_hash
  from jsonb_array_elements($3::jsonb) with ordinality as t(e, ord)
)`;
const INSERT_INTO = 'insert into events (stream_id, stream_version, tenant_id, type, schema_version, data, metadata, recorded_at, content_hash)';
const RETURNING = 'returning position::text as position, stream_version, transaction_id::text as transaction_id';

const APPEND_NO_STREAM = `with ${INPUT_CTE}
${INSERT_INTO}
select $1, input.ord, $2, input.type, input.schema_version, input.data, input.metadata, $4::timestamptz, input.content_hash
from input order by input.ord
${RETURNING}`;

const APPEND_EXACT = `with ${INPUT_CTE}
${INSERT_INTO}
select $1, $5::int + input.ord, $2, input.type, input.schema_version, input.data, input.metadata, $4::timestamptz, input.content_hash
from input
where exists (select 1 from events where stream_id = $1 and stream_version = $5::int and tenant_id = $2)
order by input.ord
${RETURNING}`;

const APPEND_ANY = `with head as (
  select stream_version, tenant_id from events where stream_id = $1 order by stream_version desc limit 1
), cur as (
  select coalesce((select stream_version from head), 0) as v,
         coalesce((select tenant_id from head), $2::text) = $2::text as same_tenant
), ${INPUT_CTE}
${INSERT_INTO}
select $1, cur.v + input.ord, $2, input.type, input.schema_version, input.data, input.metadata, $4::timestamptz, input.content_hash
from cur, input
where cur.same_tenant
order by input.ord
${RETURNING}`;

function statementFor(expected: AppendOptions['expectedVersion']): { name: string; text: string; exact: number | null } {
  if (expected === 'no_stream' || expected === 0) return { name: 'ito_ledger_append_new', text: APPEND_NO_STREAM, exact: null };
  if (expected === 'any') return { name: 'ito_ledger_append_any', text: APPEND_ANY, exact: null };
  return { name: 'ito_ledger_append_exact', text: APPEND_EXACT, exact: expected };
}

export interface PreparedEvent {
  type: string;
  schemaVersion: number;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  contentHash: string;
}

/** Stored precision is milliseconds, so the hash is computed over the value that will be read back. */
export function storedInstant(recordedAt: Date): Date {
  return new Date(Math.floor(recordedAt.getTime()));
}

/** Each event as it will be stored (data and metadata normalised through JSON once), with its content hash. */
export function prepareEvents(streamId: string, tenantId: string, events: readonly NewEvent[], at: Date): PreparedEvent[] {
  return events.map((e) => {
    // Normalise through JSON once so the stored jsonb and the hashed value are the same value.
    const data = JSON.parse(JSON.stringify(e.data)) as Record<string, unknown>;
    const metadata = JSON.parse(JSON.stringify(e.metadata ?? {})) as Record<string, unknown>;
    const schemaVersion = e.schemaVersion ?? 1;
    return {
      type: e.type,
      schemaVersion,
      data,
      metadata,
      contentHash: contentHash({ tenantId, streamId, type: e.type, schemaVersion, data, metadata, recordedAt: at }),
    };
  });
}

/** What was written, in stream order, from the rows the INSERT returned for one stream. */
export function storedFrom(
  streamId: string,
  tenantId: string,
  prepared: readonly PreparedEvent[],
  rows: Array<{ position: string; stream_version: number; transaction_id: string }>,
  at: Date,
): AppendResult {
  rows.sort((a, b) => a.stream_version - b.stream_version);
  const stored: StoredEvent[] = rows.map((row, i) => {
    const p = prepared[i] as PreparedEvent;
    return {
      position: Number(row.position),
      streamId,
      streamVersion: row.stream_version,
      tenantId,
      type: p.type,
      schemaVersion: p.schemaVersion,
      data: p.data,
      metadata: p.metadata,
      recordedAt: at,
      transactionId: row.transaction_id,
    };
  });
  return { nextExpectedVersion: (stored[stored.length - 1] as StoredEvent).streamVersion, events: stored };
}

/** Appends in one statement on `db` (a pool for autocommit, or a client inside a transaction). */
export async function appendEvents(
  db: pg.Pool | pg.PoolClient,
  streamId: string,
  events: readonly NewEvent[],
  opts: AppendOptions,
  recordedAt: Date,
): Promise<AppendResult> {
  validateAppend(streamId, events, opts);
  const at = storedInstant(recordedAt);
  const prepared = prepareEvents(streamId, opts.tenantId, events, at);
  const statement = statementFor(opts.expectedVersion);
  const values: unknown[] = [streamId, opts.tenantId, JSON.stringify(prepared), at.toISOString()];
  if (statement.exact !== null) values.push(statement.exact);

  let rows: Array<{ position: string; stream_version: number; transaction_id: string }>;
  try {
    ({ rows } = await db.query({ name: statement.name, text: statement.text, values }));
  } catch (err) {
    if (isUniqueViolation(err, 'events_stream_version_uq')) {
      throw new VersionConflictError(streamId, opts.expectedVersion, await currentVersion(db, streamId, opts.tenantId));
    }
    throw err;
  }
  if (rows.length === 0) throw new VersionConflictError(streamId, opts.expectedVersion, await currentVersion(db, streamId, opts.tenantId));
  return storedFrom(streamId, opts.tenantId, prepared, rows, at);
}

/** Only on the failure path, to say in the error where the stream actually is. */
export async function currentVersion(db: pg.Pool | pg.PoolClient, streamId: string, tenantId: string): Promise<number | null> {
  try {
    const { rows } = await db.query<{ v: number | null }>(// Scoped to the tenant: another tenant's stream reads as absent, never as its version.
      'select max(stream_version) as v from events where stream_id = $1 and tenant_id = $2',
      [streamId, tenantId],);
    return rows[0]?.v ?? 0;
  } catch {
    // Inside an aborted transaction the diagnosis is not worth a second error.
    return null;
  }
}

export function isUniqueViolation(err: unknown, constraint: string): boolean {
  const e = err as { code?: string; constraint?: string };
  return e?.code === '23505' && e.constraint === constraint;
}
