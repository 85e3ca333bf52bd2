import { createRequire } from 'node:module';
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

/** Which chain a walk reads; a tenant's walk carries the tenant, which its hashes cover. */
export type ChainKind = { chain: 'global' } | { chain: 'tenant'; tenantId: string };

/**
 * The timestamptz parser node-pg itself uses, from the pg-types that pg depends on (resolved from pg's own
 * folder, so it is that very module), without loading the driver: a hashing thread starts tens of ms sooner.
 */
const pgTypes = createRequire(createRequire(import.meta.url).resolve('pg'))('pg-types') as {
  getTypeParser(oid: number, format: 'text'): (text: string) => unknown;
};
const TIMESTAMPTZ = 1184;
const parseDriverTimestamptz = pgTypes.getTypeParser(TIMESTAMPTZ, 'text') as (text: string) => Date;

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
