import pg from 'pg';
import { copyPages, type PageSource } from './copy-pages.js';
import type { ChainKind } from './pages.js';

/**
 * A chain's links are read with `COPY (…) TO STDOUT` in text format, a keyset chunk of pages per statement
 * (copy-pages.ts), cut into pages of whole rows; a hashing thread parses a page's rows itself (pages.ts, which
 * loads no more than that needs: a thread starts faster without the driver). Each row's columns are in a fixed
 * order, as PostgreSQL's text output writes them: the numbers the chain's fields hold stay text until compared
 * (a bigint is not a safe JavaScript number), jsonb is its JSON text, and `recorded_at` is the text PostgreSQL
 * sends for a timestamptz, parsed by the driver's own parser, so the instant hashed is the one a row read
 * through the driver would give.
 */
const GLOBAL_COLUMNS = `c.seq, c.position, c.transaction_id, c.prev_hash, c.hash, e.position is not null, e.transaction_id, e.stream_id, e.stream_version,
       e.tenant_id, e.type, e.schema_version, e.data, e.metadata, e.recorded_at`;
const TENANT_COLUMNS = `t.tenant_seq, t.position, t.prev_hash, t.hash, e.position is not null, e.stream_id, e.stream_version, e.type, e.schema_version,
       e.data, e.metadata, e.recorded_at`;

/** The query for up to `limit` links after `after`, in order: COPY takes no parameters, so the values are literals. */
export function linksQuery(kind: ChainKind, after: number, limit: number, quote: (text: string) => string): string {
  if (!Number.isSafeInteger(after) || after < 0 || !Number.isSafeInteger(limit) || limit < 1) throw new RangeError('a walk reads a count of links after a link number');
  if (kind.chain === 'global') {
    return `select ${GLOBAL_COLUMNS} from event_chain c left join events e on e.position = c.position where c.seq > ${after} order by c.seq limit ${limit}`;
  }
  return `select ${TENANT_COLUMNS} from tenant_chain t left join events e on e.position = t.position
          where t.tenant_id = ${quote(kind.tenantId)} and t.tenant_seq > ${after} order by t.tenant_seq limit ${limit}`;
}

export async function readPages(db: pg.Pool | pg.PoolClient, kind: ChainKind, after: number, pageSize: number): Promise<PageSource> {
  return copyPages(db, (from, limit) => linksQuery(kind, from, limit, (text) => pg.escapeLiteral(text)), after, pageSize);
}
