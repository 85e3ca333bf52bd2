import { contentHash, linkHash } from '../hashing.js';
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
  const t = BigInt(txid);
  const pt = BigInt(prev.txid!);
  return t > pt || (t === pt && BigInt(position) > BigInt(prev.position!));
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

/** A hash computed ahead of its turn may throw where the walk would have stopped earlier: kept until reached. */
function hashing(stage: number, compute: () => string | null): LocalFailure | null {
  try {
    const reason = compute();
    return reason === null ? null : { stage, reason };
  } catch (err) {
    return { stage, error: err instanceof Error ? err.message : String(err) };
  }
}

/** A global link joined to its event, as the verifier reads it. `present` is false when the event is gone. */
export interface GlobalLinkRow {
  seq: string;
  position: string;
  chainTxid: string;
  prevHash: string | null;
  hash: string;
  present: boolean;
  txid: string | null;
  streamId: string;
  streamVersion: number;
  tenantId: string;
  type: string;
  schemaVersion: number;
  data: unknown;
  metadata: unknown;
  recordedAt: Date;
}

export function globalLinkFacts(r: GlobalLinkRow): LinkFacts {
  const position = Number(r.position);
  let local: LocalFailure | null = null;
  if (!r.present) local = { stage: 1, reason: `event at position ${position} is missing` };
  else if (r.txid !== r.chainTxid) local = { stage: 3, reason: `event at position ${position} changed its transaction id` };
  else {
    // prev_hash as stored: the walk reaches this check only once prev_hash equals the previous link's hash.
    local = hashing(5, () => {
      const content = contentHash({ tenantId: r.tenantId, streamId: r.streamId, type: r.type, schemaVersion: r.schemaVersion, data: r.data, metadata: r.metadata, recordedAt: r.recordedAt });
      const expected = linkHash({ seq: Number(r.seq), position, transactionId: r.txid!, streamVersion: r.streamVersion, contentHash: content, prevHash: r.prevHash });
      return expected !== r.hash ? `event at position ${position} does not match its sealed hash` : null;
    });
  }
  return { seq: Number(r.seq), seqText: r.seq, position, positionText: r.position, prevHash: r.prevHash, hash: r.hash, txid: r.txid, local };
}

/**
 * `new Date(text)`, remembering the last text (a tenant's records carry their instant as text, and the events of
 * one append share it). The Date answered may be the one answered before: it is only read.
 */
let lastInstantText: unknown = null;
let lastInstant = new Date(Number.NaN);
function instantOf(text: string): Date {
  if (text !== lastInstantText) {
    lastInstant = new Date(text);
    lastInstantText = text;
  }
  return lastInstant;
}

export function tenantLinkFacts(tenantId: string, r: AuditRecord): LinkFacts {
  let local: LocalFailure | null = null;
  const e = r.event;
  if (e === null) local = { stage: 1, reason: `the event at position ${r.position} is missing` };
  else {
    const recordedAt = instantOf(e.recorded_at);
    if (Number.isNaN(recordedAt.getTime())) local = { stage: 3, reason: `the event at position ${r.position} has no valid recorded_at` };
    else {
      local = hashing(4, () => {
        const content = contentHash({ tenantId, streamId: e.stream_id, type: e.type, schemaVersion: e.schema_version, data: e.data, metadata: e.metadata, recordedAt });
        const expected = tenantLinkHash({ tenantId, tenantSeq: r.tenant_seq, position: r.position, streamVersion: e.stream_version, contentHash: content, prevHash: r.prev_hash });
        return expected !== r.hash ? `the event at position ${r.position} does not match its sealed hash` : null;
      });
    }
  }
  return { seq: r.tenant_seq, seqText: String(r.tenant_seq), position: r.position, positionText: String(r.position), prevHash: r.prev_hash, hash: r.hash, txid: null, local };
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

export function walkPage(rules: ChainRules, facts: LinkFacts[]): PageOutcome {
  const first = facts[0] ?? null;
  if (!first) return { count: 0, first: null, failure: null, last: null };
  let state = stateAfter(first);
  for (let i = 1; i < facts.length; i++) {
    const f = facts[i]!;
    let reason: string | null;
    try {
      reason = linkFailure(rules, state, f);
    } catch (err) {
      return { count: facts.length, first, failure: { index: i, position: f.position, error: err instanceof Error ? err.message : String(err) }, last: null };
    }
    if (reason !== null) return { count: facts.length, first, failure: { index: i, position: f.position, reason }, last: null };
    state = stateAfter(f);
  }
  return { count: facts.length, first, failure: null, last: state };
}
