import type pg from 'pg';
import { EVENT_COLUMNS, PAYLOAD_COLUMNS, toPayloadEvent, toStoredEvent, type EventRow } from './rows.js';
import type { StoredEvent } from './types.js';

type Db = pg.Pool | pg.PoolClient;

/**
 * Safe global order. `position` comes from a sequence at insert time, so a transaction that inserts position
 * 10 can commit after the one that inserted 11. Reading by position would hand out 11 and then never look
 * back for 10. Instead we read in (transaction_id, position) order and only below the snapshot's xmin: every
 * transaction with an id under xmin has finished, so nothing can still appear before the cursor, and a
 * transaction that commits late is simply not yet below xmin.
 *
 * The cursor is a position; its transaction id is looked up, so callers keep one number.
 * Cost: a transaction held open anywhere on the server (any database: xids are cluster wide) holds readers
 * back until it ends. That is delay, never loss.
 */
function safeReadSql(withCursor: boolean, columns = EVENT_COLUMNS): string {
  return `
select ${columns}
from events e
where e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
  ${withCursor ? 'and (e.transaction_id, e.position) > (select c.transaction_id, c.position from events c where c.position = $4::bigint)' : ''}
  and ($1::text is null or e.tenant_id = $1::text)
  and ($2::text[] is null or e.type = any($2::text[]))
-- Qualified on purpose: the select list renames position and transaction_id to their text forms, and an
-- unqualified ORDER BY would sort those strings ('10' before '9').
order by e.transaction_id, e.position
limit $3`;
}
// Two statements rather than one with "$after = 0 or …", so each keeps a plan that range-scans the index.
const SAFE_READ_FROM_START = safeReadSql(false);
const SAFE_READ_AFTER = safeReadSql(true);
const PAYLOADS_FROM_START = safeReadSql(false, PAYLOAD_COLUMNS);
const PAYLOADS_AFTER = safeReadSql(true, PAYLOAD_COLUMNS);

export interface SafeReadOptions {
  after?: number;
  limit?: number;
  tenantId?: string;
  types?: string[];
  /** Only position, type, schema version, data and recorded time (the rest empty): a payload-only projection's read. */
  payloadsOnly?: boolean;
}

export async function readSafe(db: Db, opts: SafeReadOptions = {}): Promise<StoredEvent[]> {
  const after = opts.after ?? 0;
  const values: unknown[] = [opts.tenantId ?? null, opts.types ?? null, opts.limit ?? 1000];
  if (opts.payloadsOnly) {
    const { rows } = await db.query<EventRow>(
      after > 0
        ? { name: 'ito_ledger_read_payloads_after', text: PAYLOADS_AFTER, values: [...values, after] }
        : { name: 'ito_ledger_read_payloads_start', text: PAYLOADS_FROM_START, values },
    );
    return rows.map(toPayloadEvent);
  }
  const { rows } = await db.query<EventRow>(
    after > 0
      ? { name: 'ito_ledger_read_safe_after', text: SAFE_READ_AFTER, values: [...values, after] }
      : { name: 'ito_ledger_read_safe_start', text: SAFE_READ_FROM_START, values },
  );
  return rows.map(toStoredEvent);
}

export async function readStreamRows(db: Db, streamId: string, opts: { tenantId?: string; fromVersion?: number } = {}): Promise<StoredEvent[]> {
  const { rows } = await db.query<EventRow>({
    name: 'ito_ledger_read_stream',
    text: `select ${EVENT_COLUMNS} from events
           where stream_id = $1 and stream_version >= $2 and ($3::text is null or tenant_id = $3::text)
           order by stream_version`,
    values: [streamId, opts.fromVersion ?? 1, opts.tenantId ?? null],
  });
  return rows.map(toStoredEvent);
}
