import type { KeyObject } from 'node:crypto';
import { parseStrictJson } from '@ito/contracts';
import { z } from 'zod';
import { canonicalJson } from '../canonical-json.js';
import { DIGEST_FORMAT, verifyDigestSignature, type SignedDigest } from './digest.js';
import { rootFromProof, type ProofStep } from './merkle.js';
import { TenantChainWalker, type AuditRecord } from './records.js';

export const EXPORT_FORMAT = 'ito.audit.export/v1';
/** Longest line an export may hold: an event is at most what a 2 MiB request could carry, plus its link. */
export const MAX_EXPORT_LINE_BYTES = 4 * 1024 * 1024;

const hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const seq = z.number().int().min(1);

/** The tenant's chain head a published digest committed to, and the path from it to the digest's root. */
export interface ExportAnchor {
  signed: SignedDigest;
  leaf: { tenant_seq: number; hash: string };
  proof: ProofStep[];
}

export interface ExportHeader {
  format: typeof EXPORT_FORMAT;
  tenant_id: string;
  exported_at: string;
  anchor: ExportAnchor | null;
}

export interface ExportTrailer {
  end: true;
  count: number;
  head: { tenant_seq: number; hash: string } | null;
  /** Every event type in the export with the schema versions it was stored at. */
  schema_versions: Record<string, number[]>;
}

const signedSchema = z.strictObject({
  digest: z.strictObject({
    format: z.literal(DIGEST_FORMAT),
    seq: z.number().int().min(0),
    head_hash: hex64.nullable(),
    tenants_root: hex64.nullable(),
    tenant_count: z.number().int().min(0),
    published_at: z.string().max(64),
  }),
  signature: z.string().max(200),
  key_id: hex64,
});

const headerSchema = z.strictObject({
  format: z.literal(EXPORT_FORMAT),
  tenant_id: z.string().min(1).max(200),
  exported_at: z.string().max(64),
  anchor: z
    .strictObject({
      signed: signedSchema,
      leaf: z.strictObject({ tenant_seq: seq, hash: hex64 }),
      proof: z.array(z.strictObject({ side: z.enum(['left', 'right']), hash: hex64 })).max(64),
    })
    .nullable(),
});

const recordSchema = z.strictObject({
  tenant_seq: seq,
  position: z.number().int().min(1),
  prev_hash: hex64.nullable(),
  hash: hex64,
  event: z
    .strictObject({
      stream_id: z.string().max(200),
      stream_version: z.number().int().min(1),
      type: z.string().max(200),
      schema_version: z.number().int().min(1),
      data: z.unknown(),
      metadata: z.unknown(),
      recorded_at: z.string().max(64),
    })
    .nullable(),
});

const trailerSchema = z.strictObject({
  end: z.literal(true),
  count: z.number().int().min(0),
  head: z.strictObject({ tenant_seq: seq, hash: hex64 }).nullable(),
  schema_versions: z.record(z.string().max(200), z.array(z.number().int().min(1)).max(1000)),
});

export const exportHeaderLine = (h: ExportHeader): string => canonicalJson(h);
export const exportRecordLine = (r: AuditRecord): string => canonicalJson(r);
export const exportTrailerLine = (t: ExportTrailer): string => canonicalJson(t);

/** Collects the schema versions of the records written, for the trailer. */
export function schemaVersionsOf(records: Iterable<AuditRecord>, into: Record<string, number[]> = {}): Record<string, number[]> {
  for (const r of records) {
    if (!r.event) continue;
    const list = (into[r.event.type] ??= []);
    if (!list.includes(r.event.schema_version)) list.push(r.event.schema_version);
  }
  for (const list of Object.values(into)) list.sort((a, b) => a - b);
  return into;
}

export type ExportVerdict =
  | {
      ok: true;
      tenant_id: string;
      checked: number;
      head: { tenant_seq: number; hash: string } | null;
      /** `signature_verified`: the anchor's digest is signed by the given key and the chain leads to it. */
      anchor: 'signature_verified' | 'unsigned_anchor' | 'none';
      anchored_digest: SignedDigest['digest'] | null;
      schema_versions: Record<string, number[]>;
    }
  | { ok: false; checked: number; first_bad_position: number | null; line: number | null; reason: string };

/**
 * Verifies an export line by line, with nothing but the file (and, to check the anchor's signature, the
 * operator's public key): strict JSON per line, the tenant chain recomputed from position to position, the
 * trailer's head and schema versions against what was recomputed, and the anchor's Merkle path and signature.
 * Errors name a line or a position, never the file's content.
 */
export class ExportVerifier {
  private lineNo = 0;
  private header: ExportHeader | null = null;
  private walker: TenantChainWalker | null = null;
  private trailer: ExportTrailer | null = null;
  private failure: Extract<ExportVerdict, { ok: false }> | null = null;
  private readonly seen: Record<string, number[]> = {};

  constructor(private readonly publicKey: KeyObject | null = null) {}

  private refuse(reason: string, position: number | null = null, line: number | null = this.lineNo): Extract<ExportVerdict, { ok: false }> {
    this.failure ??= { ok: false, checked: this.walker?.verdict().checked ?? 0, first_bad_position: position, line, reason };
    return this.failure;
  }

  private fail(reason: string, position: number | null = null): false {
    this.refuse(reason, position);
    return false;
  }

  /** A reader that stopped buffering a line past MAX_EXPORT_LINE_BYTES says so here instead of pushing it. */
  pushOverlongLine(): false {
    this.lineNo += 1;
    return this.fail('the line is too long');
  }

  /** Feeds one line (without its newline); false once the export is refused. */
  push(line: string): boolean {
    if (this.failure) return false;
    this.lineNo += 1;
    if (this.trailer) return this.fail('there is content after the trailer');
    if (Buffer.byteLength(line, 'utf8') > MAX_EXPORT_LINE_BYTES) return this.fail('the line is too long');
    const parsed = parseStrictJson(line);
    if (!parsed.ok) return this.fail(`the line is not valid JSON (${parsed.error.reason} at column ${parsed.error.column})`);
    if (!this.header) {
      const h = headerSchema.safeParse(parsed.value);
      if (!h.success) return this.fail('the first line is not an export header of this format');
      this.header = h.data as ExportHeader;
      this.walker = new TenantChainWalker(this.header.tenant_id, new Set(this.header.anchor ? [this.header.anchor.leaf.tenant_seq] : []));
      return true;
    }
    if (typeof parsed.value === 'object' && parsed.value !== null && 'end' in parsed.value) {
      const t = trailerSchema.safeParse(parsed.value);
      if (!t.success) return this.fail('the trailer is malformed');
      this.trailer = t.data as ExportTrailer;
      return true;
    }
    const r = recordSchema.safeParse(parsed.value);
    if (!r.success) return this.fail('the line is not an audit record');
    const record = r.data as AuditRecord;
    if (!this.walker!.push(record)) {
      const v = this.walker!.verdict();
      return v.ok ? this.fail('the chain is broken') : this.fail(v.reason, v.first_bad_position);
    }
    schemaVersionsOf([record], this.seen);
    return true;
  }

  verdict(): ExportVerdict {
    if (this.failure) return this.failure;
    if (!this.header || !this.walker) return this.refuse('the export is empty');
    if (!this.trailer) return this.refuse('the export ends without its trailer: it was cut short');
    const chain = this.walker.verdict();
    if (!chain.ok) return { ok: false, checked: chain.checked, first_bad_position: chain.first_bad_position, line: null, reason: chain.reason };
    const t = this.trailer;
    if (t.count !== chain.checked) return this.refuse(`the trailer counts ${t.count} records but the export holds ${chain.checked}`, null, null);
    if (canonicalJson(t.head) !== canonicalJson(chain.head)) return this.refuse('the trailer names another chain head than the one recomputed', null, null);
    if (canonicalJson(schemaVersionsOf([], structuredClone(t.schema_versions))) !== canonicalJson(schemaVersionsOf([], this.seen))) {
      return this.refuse('the trailer lists other schema versions than the records hold', null, null);
    }
    let anchor: 'signature_verified' | 'unsigned_anchor' | 'none' = 'none';
    const a = this.header.anchor;
    if (a) {
      const reached = this.walker.hashAt(a.leaf.tenant_seq);
      if (reached !== a.leaf.hash) return this.refuse(`the chain does not lead to the anchored link ${a.leaf.tenant_seq}`, null, null);
      const root = rootFromProof({ tenantId: this.header.tenant_id, tenantSeq: a.leaf.tenant_seq, hash: a.leaf.hash }, a.proof);
      if (root !== a.signed.digest.tenants_root) return this.refuse("the anchor's path does not reach the digest's root", null, null);
      if (this.publicKey) {
        if (!verifyDigestSignature(a.signed, this.publicKey)) return this.refuse("the anchor's signature does not verify with the given public key", null, null);
        anchor = 'signature_verified';
      } else anchor = 'unsigned_anchor';
    } else if (this.publicKey) {
      return this.refuse('the export holds no signed digest to check the public key against', null, null);
    }
    return {
      ok: true,
      tenant_id: this.header.tenant_id,
      checked: chain.checked,
      head: chain.head,
      anchor,
      anchored_digest: a?.signed.digest ?? null,
      schema_versions: schemaVersionsOf([], this.seen),
    };
  }
}
