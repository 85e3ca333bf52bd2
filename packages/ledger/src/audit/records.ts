import { CHAIN_START, TENANT_CHAIN, linkFailure, stateAfter, tenantLinkFacts, type LinkState } from './link-rules.js';

export type { AuditEventBody, AuditRecord } from './record-types.js';
import type { AuditRecord } from './record-types.js';

export type RecordsVerdict =
  | { ok: true; checked: number; head: { tenant_seq: number; hash: string } | null }
  | { ok: false; checked: number; first_bad_position: number; reason: string };

/**
 * Walks a tenant's records from its first link, recomputing each event's content hash from its fields and each
 * link from that and the previous link; trusts no stored hash but the one it is checking. An altered event, a
 * removed event or link and a reordering all diverge at the first position they touch, which it names.
 *
 * `from` starts the walk after a link the caller already trusts (a signed digest's leaf): the next record must
 * follow it, and nothing before it is looked at.
 */
export class TenantChainWalker {
  private checked = 0;
  private state: LinkState;
  private failure: Extract<RecordsVerdict, { ok: false }> | null = null;
  private readonly heads = new Map<number, string>();

  constructor(
    private readonly tenantId: string,
    /** Tenant sequence numbers whose hash the caller wants kept (an anchor's leaf). */
    private readonly keep: ReadonlySet<number> = new Set(),
    from: { tenant_seq: number; hash: string } | null = null,
  ) {
    this.state = from ? { ...CHAIN_START, seq: from.tenant_seq, hash: from.hash } : CHAIN_START;
    if (from && keep.has(from.tenant_seq)) this.heads.set(from.tenant_seq, from.hash);
  }

  /** Feeds the next record; false once the chain is broken (later records are not looked at). */
  push(r: AuditRecord): boolean {
    if (this.failure) return false;
    const facts = tenantLinkFacts(this.tenantId, r);
    const reason = linkFailure(TENANT_CHAIN, this.state, facts);
    if (reason !== null) {
      this.failure = { ok: false, checked: this.checked, first_bad_position: r.position, reason };
      return false;
    }
    this.state = stateAfter(facts);
    this.checked += 1;
    if (this.keep.has(r.tenant_seq)) this.heads.set(r.tenant_seq, r.hash);
    return true;
  }

  verdict(): RecordsVerdict {
    if (this.failure) return this.failure;
    return { ok: true, checked: this.checked, head: this.state.hash === null ? null : { tenant_seq: this.state.seq, hash: this.state.hash } };
  }

  /** The verified hash of a kept link, or undefined when the walk did not reach it intact. */
  hashAt(tenantSeq: number): string | undefined {
    return this.heads.get(tenantSeq);
  }
}

export function verifyTenantRecords(tenantId: string, records: Iterable<AuditRecord>): RecordsVerdict {
  const walker = new TenantChainWalker(tenantId);
  for (const r of records) if (!walker.push(r)) break;
  return walker.verdict();
}
