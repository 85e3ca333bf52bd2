import pg from 'pg';
import {
  GLOBAL_CHAIN,
  TENANT_CHAIN,
  globalLinkFacts,
  tenantLinkFacts,
  walkPage,
  type GlobalLinkRow,
  type LinkFacts,
  type PageOutcome,
} from '../audit/link-rules.js';
import type { AuditRecord } from '../audit/records.js';
import { copyPages, type PageSource } from './copy-pages.js';

/**
 * A chain's links are read with `COPY (…) TO STDOUT` in text format, a keyset chunk of pages per statement
 * (copy-pages.ts), cut into pages of whole rows; a hashing thread parses a page's rows itself. Each row's columns are in a fixed order, as PostgreSQL's
 * text output writes them: the numbers the chain's fields hold stay text until compared (a bigint is not a safe
 * JavaScript number), jsonb is its JSON text, and `recorded_at` is the text PostgreSQL sends for a timestamptz,
 * parsed by the driver's own parser, so the instant hashed is the one a row read through the driver would give.
 */
const GLOBAL_COLUMNS = `c.seq, c.position, c.transaction_id, c.prev_hash, c.hash, e.position is not null, e.transaction_id, e.stream_id, e.stream_version,
       e.tenant_id, e.type, e.schema_version, e.data, e.metadata, e.recorded_at`;
const TENANT_COLUMNS = `t.tenant_seq, t.position, t.prev_hash, t.hash, e.position is not null, e.stream_id, e.stream_version, e.type, e.schema_version,
       e.data, e.metadata, e.recorded_at`;

/** Which chain a walk reads; a tenant's walk carries the tenant, which its hashes cover. */
export type ChainKind = { chain: 'global' } | { chain: 'tenant'; tenantId: string };

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

const parseDriverTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as (text: string) => Date;

/**
 * The driver's parse, remembering the last text it parsed: the events of one append share their recording
 * time, so runs of equal texts are common, and the parse (a regular expression and a Date) is a fair share of
 * a link's cost. The Date answered may be the one answered before: callers only read it.
 */
let lastTimestampText: string | null = null;
let lastTimestamp: Date | null = null;
let lastIso: string | null = null;
function parseTimestamptz(text: string): Date {
  if (text !== lastTimestampText || lastTimestamp === null) {
    lastTimestamp = parseDriverTimestamptz(text);
    lastTimestampText = text;
    lastIso = null;
  }
  return lastTimestamp;
}

/** The ISO text of the driver's parse (kept with it: a tenant's record carries the instant as text). */
function timestamptzIso(text: string): string {
  const at = parseTimestamptz(text);
  lastIso ??= at.toISOString();
  return lastIso;
}

/** A row's fields as COPY's text format writes them: null for `\\N`, else the text with its escapes undone. */
type Fields = (string | null)[];

const ESCAPED: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/** COPY TO escapes a backslash, and the control characters above, with a backslash; other bytes pass as they are. */
function unescapeCopy(field: string): string {
  return field.replace(/\\(.)/gs, (_, c: string) => ESCAPED[c] ?? c);
}

function fieldsOf(line: string): Fields {
  const raw = line.split('\t');
  const out: Fields = new Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const f = raw[i]!;
    out[i] = f === '\\N' ? null : f.includes('\\') ? unescapeCopy(f) : f;
  }
  return out;
}

const int = (f: string | null): number => (f === null ? (null as unknown as number) : Number(f));
const json = (f: string | null): unknown => (f === null ? null : JSON.parse(f));

function globalRow(t: Fields): GlobalLinkRow {
  return {
    seq: t[0]!,
    position: t[1]!,
    chainTxid: t[2]!,
    prevHash: t[3]!,
    hash: t[4]!,
    present: t[5] === 't',
    txid: t[6]!,
    streamId: t[7]!,
    streamVersion: int(t[8]!),
    tenantId: t[9]!,
    type: t[10]!,
    schemaVersion: int(t[11]!),
    data: json(t[12]!),
    metadata: json(t[13]!),
    recordedAt: t[14] === null ? (null as unknown as Date) : parseTimestamptz(t[14]!),
  };
}

/** The record `readTenantRecords` would build from the same row. */
function tenantRecord(t: Fields): AuditRecord {
  return {
    tenant_seq: Number(t[0]),
    position: Number(t[1]),
    prev_hash: t[2]!,
    hash: t[3]!,
    event:
      t[4] === 't'
        ? {
            stream_id: t[5]!,
            stream_version: int(t[6]!),
            type: t[7]!,
            schema_version: int(t[8]!),
            data: json(t[9]!),
            metadata: json(t[10]!),
            recorded_at: timestamptzIso(t[11]!),
          }
        : null,
  };
}

const utf8 = new TextDecoder();

/** Parses, hashes and walks one page of COPY rows: the work a hashing thread does. */
export function walkRawPage(kind: ChainKind, bytes: Uint8Array): PageOutcome {
  const text = utf8.decode(bytes);
  const facts: LinkFacts[] = [];
  const tenantId = kind.chain === 'tenant' ? kind.tenantId : '';
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const fields = fieldsOf(text.slice(start, end));
    facts.push(kind.chain === 'global' ? globalLinkFacts(globalRow(fields)) : tenantLinkFacts(tenantId, tenantRecord(fields)));
    start = end + 1;
  }
  return walkPage(kind.chain === 'global' ? GLOBAL_CHAIN : TENANT_CHAIN, facts);
}
