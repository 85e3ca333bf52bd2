import { contentHash } from '../hashing.js';
import type { AuditRecord } from './record-types.js';
import { tenantLinkHash } from './tenant-link.js';

/**
 * The checks a chain walk makes on each link, split in two so that links can be hashed apart (on other threads,
 * page by page) and joined after: what a link shows on its own (its event is there, its hash matches its stored
 * fields) and what needs the link before it (no gap in the sequence, prev_hash points at it, safe order). A walk
 * reports the first check that fails in one fixed order, so each check has its place (`stage`) in that order.
 */

/** The last link a walk accepted, in its stored fields: all the next link is checked against. */
export interface LinkState {
  seq: number;
  hash: string | null;
  /** Global chain only: the event's transaction id and the link's position, for the safe-order check. */
  txid: string | null;
  position: string | null;
}

export const CHAIN_START: LinkState = { seq: 0, hash: null, txid: null, position: null };

/** A check that needs no other link: passed (null), failed with a reason, or its hashing threw. */
export type LocalFailure = { stage: number; reason: string } | { stage: number; error: string };

/** One link as a walk sees it: the fields the link checks read, and its first failing local check. */
export interface LinkFacts {
  seq: number;
  /** The sequence number as it was read (the reasons print it so). */
  seqText: string;
  position: number;
  positionText: string;
  prevHash: string | null;
  hash: string;
  txid: string | null;
  local: LocalFailure | null;
}

type LinkCheck = (state: LinkState, f: LinkFacts) => string | null;

export interface ChainRules {
  /** The checks against the link before, each at its stage; local checks sit at the stages between. */
  readonly linkChecks: ReadonlyArray<readonly [stage: number, check: LinkCheck]>;
}

function isAfter(txid: string, position: string, prev: LinkState): boolean {
  const byTxid = compareIntegers(txid, prev.txid!);
  return byTxid > 0 || (byTxid === 0 && compareIntegers(position, prev.position!) > 0);
}

const PLAIN_DECIMAL = /^(?:0|[1-9][0-9]*)$/;

/**
 * Compares two integers written in decimal. PostgreSQL writes an xid8 or a bigint with no sign, no leading zero:
 * such texts compare by length, then as text, with no BigInt to build (four per link made a fair share of a
 * walk's cost). Any other text (a sign, a tampered value) is compared as BigInt, and throws as BigInt does.
 */
export function compareIntegers(a: string, b: string): number {
  if (PLAIN_DECIMAL.test(a) && PLAIN_DECIMAL.test(b)) {
    if (a.length !== b.length) return a.length < b.length ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The global chain: 0 sequence, 1 event present, 2 prev_hash, 3 transaction id, 4 safe order, 5 hash. */
export const GLOBAL_CHAIN: ChainRules = {
  linkChecks: [
    [0, (s, f) => (f.seq !== s.seq + 1 ? `chain sequence jumps from ${s.seq} to ${f.seqText}: a link is missing` : null)],
    [2, (s, f) => (f.prevHash !== s.hash ? `link ${f.seqText} does not point at the previous link` : null)],
    [4, (s, f) => (s.txid !== null && !isAfter(f.txid!, f.positionText, s) ? `link ${f.seqText} is out of safe order` : null)],
  ],
};

/** A tenant's chain: 0 sequence, 1 event present, 2 prev_hash, 3 recorded_at, 4 hash. */
export const TENANT_CHAIN: ChainRules = {
  linkChecks: [
    [0, (s, f) => (f.seq !== s.seq + 1 ? `the tenant chain jumps from ${s.seq} to ${f.seqText}: a link is missing` : null)],
    [2, (s, f) => (f.prevHash !== s.hash ? `link ${f.seqText} does not point at the previous link` : null)],
  ],
};

/** Why the link fails when it follows `state`, or null when it holds; a hashing error is thrown when reached. */
export function linkFailure(rules: ChainRules, state: LinkState, f: LinkFacts): string | null {
  for (const [stage, check] of rules.linkChecks) {
    if (f.local && f.local.stage < stage) return localReason(f.local);
    const reason = check(state, f);
    if (reason !== null) return reason;
  }
  return f.local ? localReason(f.local) : null;
}

function localReason(local: LocalFailure): string {
  if ('error' in local) throw new Error(local.error);
  return local.reason;
}

export const stateAfter = (f: LinkFacts): LinkState => ({ seq: f.seq, hash: f.hash, txid: f.txid, position: f.positionText });

/**
 * A hash computed ahead of its turn may throw where the walk would have stopped earlier: kept until reached.
 * The reason is written only when the hash differs (the text is `reason` with the position between its parts).
 */
function hashing<A>(stage: number, sealedHash: (arg: A) => string, arg: A, stored: string, position: number, reason: readonly [string, string]): LocalFailure | null {
  try {
    return sealedHash(arg) === stored ? null : { stage, reason: `${reason[0]}${position}${reason[1]}` };
  } catch (err) {
    return { stage, error: err instanceof Error ? err.message : String(err) };
  }
}

const GLOBAL_MISMATCH = ['event at position ', ' does not match its sealed hash'] as const;
const TENANT_MISMATCH = ['the event at position ', ' does not match its sealed hash'] as const;

/** A global link as the verifier reads it, beside its event's transaction id (null, and `present` false, when the event is gone). */
export interface GlobalLinkRow {
  seq: string;
  position: string;
  chainTxid: string;
  prevHash: string | null;
  hash: string;
  present: boolean;
  txid: string | null;
}

/** `sealedHash` recomputes the link's hash from its event's stored fields: called only when the event is there, with its transaction id. */
export function globalLinkFacts(r: GlobalLinkRow, sealedHash: () => string): LinkFacts {
  const position = Number(r.position);
  let local: LocalFailure | null = null;
  if (!r.present) local = { stage: 1, reason: `event at position ${position} is missing` };
  else if (r.txid !== r.chainTxid) local = { stage: 3, reason: `event at position ${position} changed its transaction id` };
  // prev_hash as stored: the walk reaches this check only once prev_hash equals the previous link's hash.
  else local = hashing(5, sealedHash, null, r.hash, position, GLOBAL_MISMATCH);
  return { seq: Number(r.seq), seqText: r.seq, position, positionText: r.position, prevHash: r.prevHash, hash: r.hash, txid: r.txid, local };
}

/**
 * `new Date(text)`, remembering the last text (a tenant's records carry their instant as text, and the events of
 * one append share it). The Date answered may be the one answered before: it is only read.
 */
let lastInstantText: unknown = null;
let lastInstant = new Date(Number.NaN);
export function instantOf(text: string): Date {
  if (text !== lastInstantText) {
    lastInstant = new Date(text);
    lastInstantText = text;
  }
  return lastInstant;
}

/** A tenant's link; `recordedAt` is null when its event is gone, and `sealedHash` recomputes the link's hash from the event's fields. */
export interface TenantLinkRow {
  tenantSeq: number;
  position: number;
  prevHash: string | null;
  hash: string;
}

export function tenantLinkFactsOf(r: TenantLinkRow, recordedAt: Date | null, sealedHash: (recordedAt: Date) => string): LinkFacts {
  let local: LocalFailure | null = null;
  if (recordedAt === null) local = { stage: 1, reason: `the event at position ${r.position} is missing` };
  else if (Number.isNaN(recordedAt.getTime())) local = { stage: 3, reason: `the event at position ${r.position} has no valid recorded_at` };
  else local = hashing(4, sealedHash, recordedAt, r.hash, r.position, TENANT_MISMATCH);
  return { seq: r.tenantSeq, seqText: String(r.tenantSeq), position: r.position, positionText: String(r.position), prevHash: r.prevHash, hash: r.hash, txid: null, local };
}

export function tenantLinkFacts(tenantId: string, r: AuditRecord): LinkFacts {
  const e = r.event;
  const link = { tenantSeq: r.tenant_seq, position: r.position, prevHash: r.prev_hash, hash: r.hash };
  return tenantLinkFactsOf(link, e === null ? null : instantOf(e.recorded_at), (recordedAt) => {
    const content = contentHash({ tenantId, streamId: e!.stream_id, type: e!.type, schemaVersion: e!.schema_version, data: e!.data, metadata: e!.metadata, recordedAt });
    return tenantLinkHash({ tenantId, tenantSeq: r.tenant_seq, position: r.position, streamVersion: e!.stream_version, contentHash: content, prevHash: r.prev_hash });
  });
}

/**
 * A page of links walked on its own. Its first link cannot be joined here (the link before it is on the page
 * before), so it is handed back to be joined in order; every later link is joined to the one before it.
 */
export interface PageOutcome {
  count: number;
  first: LinkFacts | null;
  /** The first link after the first that fails, given that the first holds: its index on the page. */
  failure: { index: number; position: number; reason: string } | { index: number; position: number; error: string } | null;
  /** The state after the page's last link, when no link after the first failed. */
  last: LinkState | null;
}

/**
 * Walks a page link by link as its links come: the first is kept to be joined by the caller, each later one
 * is joined to the one before it. `add` answers false once a link fails (the links after it need no hashing).
 */
export class PageWalk {
  private added = 0;
  private first: LinkFacts | null = null;
  private state: LinkState | null = null;
  private failure: PageOutcome['failure'] = null;

  constructor(private readonly rules: ChainRules) {}

  add(f: LinkFacts): boolean {
    const index = this.added++;
    if (index === 0) {
      this.first = f;
      this.state = stateAfter(f);
      return true;
    }
    let reason: string | null;
    try {
      reason = linkFailure(this.rules, this.state!, f);
    } catch (err) {
      this.failure = { index, position: f.position, error: err instanceof Error ? err.message : String(err) };
      return false;
    }
    if (reason !== null) {
      this.failure = { index, position: f.position, reason };
      return false;
    }
    this.state = stateAfter(f);
    return true;
  }

  /** The page's outcome; `count` is how many links the page holds (added or not). */
  outcome(count: number): PageOutcome {
    return { count, first: this.first, failure: this.failure, last: this.failure ? null : this.state };
  }
}

export function walkPage(rules: ChainRules, facts: LinkFacts[]): PageOutcome {
  const walk = new PageWalk(rules);
  for (const f of facts) if (!walk.add(f)) break;
  return walk.outcome(facts.length);
}
