import type pg from 'pg';
import { ItoError } from '@ito/contracts';
import { currentVersion, isUniqueViolation, prepareEvents, storedFrom, storedInstant, type PreparedEvent } from './append.js';
import { VersionConflictError } from './errors.js';
import type { AppendResult, StreamAppend } from './types.js';
import { validateAppend } from './validate.js';

/** Streams one multi-stream append may write: a command's few, not a bulk load. */
export const MAX_STREAMS_PER_APPEND = 100;

/**
 * Appends to several streams, each with its own expected version, in ONE statement (one round trip): every event of
 * every stream or none. Each stream is checked as `appendEvents` checks it, in the same statement:
 * - no_stream (or 0): versions 1..n; an existing stream holds version 1, so events_stream_version_uq refuses;
 * - exact N: only if version N exists for this tenant; a stream past N holds N+1 and the unique index refuses;
 * - any: after the head, if the head is this tenant's (or there is none); a racing writer loses on the unique index.
 * A stream whose first new version is already taken (no_stream on an existing stream, a stale exact version) is
 * found by the statement itself, before it inserts. One stream's check failing inserts nothing for any stream,
 * and the answer names the refused streams, so the error is the one the first of separate appends in the same
 * order would have thrown: a VersionConflictError for that stream. Only a writer racing this one (its rows not
 * yet committed when this statement looked) is refused by the unique index instead, with the stream it names.
 */
// Each stream's reads are lateral subqueries with LIMIT (never pulled up into a join), so each is one probe of
// the (stream_id, stream_version) unique index on both columns, whatever the planner thinks of the input's size:
// an EXISTS could become a hashed scan of the whole table, a pulled-up join a scan of the whole stream.
const APPEND_MANY = `with streams as (
  select s.ord::int as sidx, s.x->>'streamId' as stream_id, s.x->>'tenantId' as tenant_id, s.x->>'mode' as mode,
         (s.x->>'expected')::int as expected, s.x->'events' as events
  from jsonb_array_elements($1::jsonb) with ordinality as s(x, ord)
), heads as (
  select st.sidx, st.stream_id, st.tenant_id, st.events,
         case st.mode when 'new' then 0 when 'exact' then st.expected else coalesce(h.v, 0) end as base,
         case st.mode
           when 'new' then true
           when 'exact' then coalesce(x.tenant_id = st.tenant_id, false)
           else coalesce(h.tenant_id, st.tenant_id) = st.tenant_id
         end as gate
  from streams st
  left join lateral (
    select e.stream_version as v, e.tenant_id from events e
    where st.mode = 'any' and e.stream_id = st.stream_id order by e.stream_version desc limit 1
  ) h on true
  left join lateral (
    select e.tenant_id from events e where st.mode = 'exact' and e.stream_id = st.stream_id and e.stream_version = st.expected limit 1
  ) x on true
), bases as (
  select hd.*, hd.gate and taken.v is null as ok
  from heads hd
  left join lateral (select e.stream_version as v from events e where e.stream_id = hd.stream_id and e.stream_version = hd.base + 1 limit 1) taken on true
), written as (
  insert into events (stream_id, stream_version, tenant_id, type, schema_version, data, metadata, recorded_at, content_hash)
  select b.stream_id, b.base + ev.ord::int, b.tenant_id, ev.e->>'type', (ev.e->>'schemaVersion')::int, ev.e->'data', ev.e->'metadata',
         $2::timestamptz, ev.e->>'contentHash'
  from bases b cross join lateral jsonb_array_elements(b.events) with ordinality as ev(e, ord)
  where not exists (select 1 from bases where not ok)
  order by b.sidx, ev.ord
  returning position::text as position, stream_id, stream_version, transaction_id::text as transaction_id
)
select position, stream_id, stream_version, transaction_id, null::int as refused from written
union all
select null, null, null, null, sidx from bases where not ok`;

interface Row {
  position: string | null;
  stream_id: string | null;
  stream_version: number | null;
  transaction_id: string | null;
  refused: number | null;
}

type Mode = { mode: 'new' } | { mode: 'exact'; expected: number } | { mode: 'any' };

function modeOf(expected: StreamAppend['opts']['expectedVersion']): Mode {
  if (expected === 'no_stream' || expected === 0) return { mode: 'new' };
  if (expected === 'any') return { mode: 'any' };
  return { mode: 'exact', expected };
}

/** Refuses a malformed multi-stream append before it reaches the database, with validation_failed. */
export function validateMany(appends: readonly StreamAppend[]): void {
  if (!Array.isArray(appends) || appends.length === 0 || appends.length > MAX_STREAMS_PER_APPEND) {
    throw new ItoError('validation_failed', `a multi-stream append holds 1 to ${MAX_STREAMS_PER_APPEND} streams`);
  }
  const seen = new Set<string>();
  for (const a of appends) {
    validateAppend(a?.streamId, a?.events, a?.opts);
    // A stream twice would race itself for the same versions; one entry per stream holds all its events.
    if (seen.has(a.streamId)) throw new ItoError('validation_failed', 'a multi-stream append names each stream once');
    seen.add(a.streamId);
  }
}

/** The stream a unique violation names (`Key (stream_id, stream_version)=(<id>, <n>) already exists.`), if any of ours. */
function streamOfViolation(err: unknown, appends: readonly StreamAppend[]): StreamAppend {
  const detail = (err as { detail?: unknown }).detail;
  const named = typeof detail === 'string' ? /^Key \(stream_id, stream_version\)=\((.*), \d+\) already exists\.$/s.exec(detail)?.[1] : undefined;
  return appends.find((a) => a.streamId === named) ?? appends[0]!;
}

/**
 * Appends to every stream of `appends` in one statement on `db` (a pool for autocommit, or a client inside a
 * transaction); the results are in the order of `appends`. A conflict on any stream writes nothing and throws
 * that stream's VersionConflictError (the first refused stream's, in the order given).
 */
export async function appendStreams(db: pg.Pool | pg.PoolClient, appends: readonly StreamAppend[], recordedAt: Date): Promise<AppendResult[]> {
  validateMany(appends);
  const at = storedInstant(recordedAt);
  const prepared: PreparedEvent[][] = appends.map((a) => prepareEvents(a.streamId, a.opts.tenantId, a.events, at));
  const input = appends.map((a, i) => ({ streamId: a.streamId, tenantId: a.opts.tenantId, ...modeOf(a.opts.expectedVersion), events: prepared[i] }));

  let rows: Row[];
  try {
    ({ rows } = await db.query<Row>({ name: 'ito_ledger_append_many', text: APPEND_MANY, values: [JSON.stringify(input), at.toISOString()] }));
  } catch (err) {
    if (isUniqueViolation(err, 'events_stream_version_uq')) {
      const a = streamOfViolation(err, appends);
      throw new VersionConflictError(a.streamId, a.opts.expectedVersion, await currentVersion(db, a.streamId, a.opts.tenantId));
    }
    throw err;
  }
  const refused = rows.filter((r) => r.refused !== null).map((r) => r.refused!);
  if (refused.length > 0) {
    const a = appends[Math.min(...refused) - 1]!;
    throw new VersionConflictError(a.streamId, a.opts.expectedVersion, await currentVersion(db, a.streamId, a.opts.tenantId));
  }
  return appends.map((a, i) => {
    const own = rows.filter((r) => r.stream_id === a.streamId) as Array<{ position: string; stream_version: number; transaction_id: string }>;
    return storedFrom(a.streamId, a.opts.tenantId, prepared[i]!, own, at);
  });
}
