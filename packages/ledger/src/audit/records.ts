import { contentHash } from '../hashing.js';
import { tenantLinkHash } from './tenant-link.js';

/** The stored fields of an event, as an audit record carries them (recorded_at as an ISO instant). */
export interface AuditEventBody {
  stream_id: string;
  stream_version: number;
  type: string;
  schema_version: number;
  data: unknown;
  metadata: unknown;
  recorded_at: string;
}

/**
 * One link of a tenant's chain with the event it seals, as the audit route serves it and an export holds it.
 * `event` is null when the link names a position whose event is no longer in the table.
 */
export interface AuditRecord {
  tenant_seq: number;
  position: number;
  prev_hash: string | null;
  hash: string;
  event: AuditEventBody | null;
}

export type RecordsVerdict =
  | { ok: true; checked: number; head: { tenant_seq: number; hash: string } | null }
  | { ok: false; checked: number; first_bad_position: number; reason: string };

/**
 * Walks a tenant's records from its first link, recomputing each event's content hash from its fields and each
 * link from that and the previous link; trusts no stored hash but the one it is checking. An altered event, a
 * removed event or link and a reordering all diverge at the first position they touch, which it names.
 */
export class TenantChainWalker {
  private checked = 0;
  private prevHash: string | null = null;
  private lastSeq = 0;
  private failure: Extract<RecordsVerdict, { ok: false }> | null = null;
  private readonly heads = new Map<number, string>();

  constructor(
    private readonly tenantId: string,
    /** Tenant sequence numbers whose hash the caller wants kept (an anchor's leaf). */
    private readonly keep: ReadonlySet<number> = new Set(),
  ) {}

  /** Feeds the next record; false once the chain is broken (later records are not looked at). */
  push(r: AuditRecord): boolean {
    if (this.failure) return false;
    const bad = (reason: string) => {
      this.failure = { ok: false, checked: this.checked, first_bad_position: r.position, reason };
      return false;
    };
    if (r.tenant_seq !== this.lastSeq + 1) return bad(`the tenant chain jumps from ${this.lastSeq} to ${r.tenant_seq}: a link is missing`);
    if (r.event === null) return bad(`the event at position ${r.position} is missing`);
    if (r.prev_hash !== this.prevHash) return bad(`link ${r.tenant_seq} does not point at the previous link`);
    const e = r.event;
    const recordedAt = new Date(e.recorded_at);
    if (Number.isNaN(recordedAt.getTime())) return bad(`the event at position ${r.position} has no valid recorded_at`);
    const content = contentHash({
      tenantId: this.tenantId,
      streamId: e.stream_id,
      type: e.type,
      schemaVersion: e.schema_version,
      data: e.data,
      metadata: e.metadata,
      recordedAt,
    });
    const expected = tenantLinkHash({
      tenantId: this.tenantId,
      tenantSeq: r.tenant_seq,
      position: r.position,
      streamVersion: e.stream_version,
      contentHash: content,
      prevHash: this.prevHash,
    });
    if (expected !== r.hash) return bad(`the event at position ${r.position} does not match its sealed hash`);
    this.prevHash = r.hash;
    this.lastSeq = r.tenant_seq;
    this.checked += 1;
    if (this.keep.has(r.tenant_seq)) this.heads.set(r.tenant_seq, r.hash);
    return true;
  }

  verdict(): RecordsVerdict {
    if (this.failure) return this.failure;
    return { ok: true, checked: this.checked, head: this.prevHash === null ? null : { tenant_seq: this.lastSeq, hash: this.prevHash } };
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
