import type { AppendOptions } from './types.js';

/**
 * The statements of a single-stream append. The whole append is one statement, sent as one round trip, and it
 * inserts every event or none. Which statement depends on the expectation, so the common cases do no more work
 * than they need:
 * - no_stream: insert versions 1..n. An existing stream (of any tenant) already holds version 1, so
 *   events_stream_version_uq refuses the insert: no read of the stream at all.
 * - exact N: insert N+1..N+n only if version N exists for this tenant; a stream already past N holds N+1 and
 *   the unique index refuses. (N = 0 is no_stream.)
 * - any: read the head, check the tenant, insert after it; a racing writer loses on the unique index.
 * Named, so each connection parses and plans each statement once.
 *
 * One event (the common append) goes as scalar parameters into a one-row INSERT: no jsonb array for the server
 * to parse, unpack with ordinality and sort, and no data and metadata to copy out of it. Several go as one
 * jsonb array.
 */
export interface AppendStatement {
  name: string;
  text: string;
  /** The expected version, as the statement's last parameter (exact N only). */
  exact: number | null;
}

const INSERT_INTO = 'insert into events (stream_id, stream_version, tenant_id, type, schema_version, data, metadata, recorded_at, content_hash)';
const RETURNING = 'returning position::text as position, stream_version, transaction_id::text as transaction_id';
/** The head of a stream (for `any`), and whether it is absent or this tenant's. $1 stream, $2 tenant. */
const HEAD_CTES = `head as (
  select stream_version, tenant_id from events where stream_id = $1 order by stream_version desc limit 1
), cur as (
  select coalesce((select stream_version from head), 0) as v,
         coalesce((select tenant_id from head), $2::text) = $2::text as same_tenant
)`;

// Several events: $1 stream, $2 tenant, $3 the events as a jsonb array, $4 recorded_at, $5 the expected version.
const INPUT_CTE = `input as (
  select t.ord::int as ord, t.e->>'type' as type, (t.e->>'schemaVersion')::int as schema_version,
         t.e->'data' as data, t.e->'metadata' as metadata, t.e->>'contentHash' as content_hash
  from jsonb_array_elements($3::jsonb) with ordinality as t(e, ord)
)`;

const MANY_NO_STREAM = `with ${INPUT_CTE}
${INSERT_INTO}
select $1, input.ord, $2, input.type, input.schema_version, input.data, input.metadata, $4::timestamptz, input.content_hash
from input order by input.ord
${RETURNING}`;

const MANY_EXACT = `with ${INPUT_CTE}
${INSERT_INTO}
select $1, $5::int + input.ord, $2, input.type, input.schema_version, input.data, input.metadata, $4::timestamptz, input.content_hash
from input
where exists (select 1 from events where stream_id = $1 and stream_version = $5::int and tenant_id = $2)
order by input.ord
${RETURNING}`;

const MANY_ANY = `with ${HEAD_CTES}, ${INPUT_CTE}
${INSERT_INTO}
select $1, cur.v + input.ord, $2, input.type, input.schema_version, input.data, input.metadata, $4::timestamptz, input.content_hash
from cur, input
where cur.same_tenant
order by input.ord
${RETURNING}`;

// One event: $1 stream, $2 tenant, $3 type, $4 schema version, $5 data (JSON text), $6 metadata (JSON text),
// $7 recorded_at, $8 content hash, $9 the expected version.
const ONE_VALUES = '$2::text, $3::text, $4::int, $5::jsonb, $6::jsonb, $7::timestamptz, $8::text';

const ONE_NO_STREAM = `${INSERT_INTO}
values ($1::text, 1, ${ONE_VALUES})
${RETURNING}`;

const ONE_EXACT = `${INSERT_INTO}
select $1::text, $9::int + 1, ${ONE_VALUES}
where exists (select 1 from events where stream_id = $1 and stream_version = $9::int and tenant_id = $2)
${RETURNING}`;

const ONE_ANY = `with ${HEAD_CTES}
${INSERT_INTO}
select $1::text, cur.v + 1, ${ONE_VALUES}
from cur
where cur.same_tenant
${RETURNING}`;

export function statementFor(expected: AppendOptions['expectedVersion'], eventCount: number): AppendStatement {
  const one = eventCount === 1;
  if (expected === 'no_stream' || expected === 0) {
    return one ? { name: 'ito_ledger_append_one_new', text: ONE_NO_STREAM, exact: null } : { name: 'ito_ledger_append_new', text: MANY_NO_STREAM, exact: null };
  }
  if (expected === 'any') return one ? { name: 'ito_ledger_append_one_any', text: ONE_ANY, exact: null } : { name: 'ito_ledger_append_any', text: MANY_ANY, exact: null };
  return one ? { name: 'ito_ledger_append_one_exact', text: ONE_EXACT, exact: expected } : { name: 'ito_ledger_append_exact', text: MANY_EXACT, exact: expected };
}
