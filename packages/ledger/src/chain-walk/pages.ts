import { createRequire } from 'node:module';
import { LastJsonString, contentHashOfTexts, linkHashOf } from '../hashing.js';
import { GLOBAL_CHAIN, PageWalk, TENANT_CHAIN, globalLinkFacts, instantOf, tenantLinkFactsOf, type LinkFacts, type PageOutcome } from '../audit/link-rules.js';
import { tenantLinkHashOf } from '../audit/tenant-link.js';
import { CopyText, type Fields } from './copy-text.js';
import { canonicalJsonb } from './jsonb-canonical.js';

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

const int = (f: string | null): number | null => (f === null ? null : Number(f));

/**
 * A jsonb column's canonical JSON (jsonb-canonical.ts: jsonb writes keys in an order of its own, and numbers as
 * it stores them, so its text is not hashed as it is), the last text kept with it: metadata, and data, often repeat
 * from one event to the next.
 */
const data = new LastJsonString(canonicalJsonb);
const metadata = new LastJsonString(canonicalJsonb);

/**
 * The row being read, in an array reused from row to row. The functions that recompute a link's hash read it
 * while the row's facts are made (never later), so the closures they would otherwise be need not be built.
 */
const globalFields: Fields = new Array<string | null>(15).fill(null);
const tenantFields: Fields = new Array<string | null>(12).fill(null);
let tenantOfWalk = '';

/** Global row: seq, position, chain txid, prev_hash, hash, present, txid, stream, version, tenant, type, schema, data, metadata, recorded_at. */
function globalSealedHash(): string {
  const t = globalFields;
  const recordedAt = t[14] === null ? (null as unknown as Date) : parseTimestamptz(t[14]!);
  const content = contentHashOfTexts(data.of(t[12]!), metadata.of(t[13]!), recordedAt, int(t[11]!), t[7]!, t[9]!, t[10]!);
  return linkHashOf(content, Number(t[1]), t[3]!, Number(t[0]), int(t[8]!), t[6]!);
}

function globalFacts(): LinkFacts {
  const t = globalFields;
  return globalLinkFacts({ seq: t[0]!, position: t[1]!, chainTxid: t[2]!, prevHash: t[3]!, hash: t[4]!, present: t[5] === 't', txid: t[6]! }, globalSealedHash);
}

/** Tenant row: tenant_seq, position, prev_hash, hash, present, stream, version, type, schema, data, metadata, recorded_at. */
function tenantSealedHash(recordedAt: Date): string {
  const t = tenantFields;
  const content = contentHashOfTexts(data.of(t[9]!), metadata.of(t[10]!), recordedAt, int(t[8]!), t[5]!, tenantOfWalk, t[7]!);
  return tenantLinkHashOf(content, Number(t[1]), t[2]!, int(t[6]!), tenantOfWalk, Number(t[0]));
}

function tenantFacts(): LinkFacts {
  const t = tenantFields;
  // The instant as a tenant's record carries it (ISO text, readTenantRecords' form) and as its walker reads it back.
  const recordedAt = t[4] === 't' ? instantOf(timestamptzIso(t[11]!)) : null;
  return tenantLinkFactsOf({ tenantSeq: Number(t[0]), position: Number(t[1]), prevHash: t[2]!, hash: t[3]! }, recordedAt, tenantSealedHash);
}

const utf8 = new TextDecoder();

/**
 * Parses, hashes and walks one page of COPY rows: the work a hashing thread does. The page is decoded once and
 * its rows read and walked one at a time; after a link that fails, the rest are only counted.
 */
export function walkRawPage(kind: ChainKind, bytes: Uint8Array): PageOutcome {
  const rows = new CopyText(utf8.decode(bytes));
  const global = kind.chain === 'global';
  const walk = new PageWalk(global ? GLOBAL_CHAIN : TENANT_CHAIN);
  if (kind.chain === 'tenant') tenantOfWalk = kind.tenantId;
  let count = 0;
  for (let at = 0; at < rows.text.length; ) {
    at = rows.row(at, global ? globalFields : tenantFields);
    count += 1;
    if (!walk.add(global ? globalFacts() : tenantFacts())) return walk.outcome(count + rows.rowsFrom(at));
  }
  return walk.outcome(count);
}
