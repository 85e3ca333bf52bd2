import { canonicalJson, sha256Hex } from './canonical-json.js';

/** The fields a writer knows before insert; `content_hash` is computed over exactly these. */
export interface EventContent {
  tenantId: string;
  streamId: string;
  type: string;
  schemaVersion: number;
  data: unknown;
  metadata: unknown;
  recordedAt: Date;
}

export function contentHash(e: EventContent): string {
  return sha256Hex(
    canonicalJson({
      tenantId: e.tenantId,
      streamId: e.streamId,
      type: e.type,
      schemaVersion: e.schemaVersion,
      data: e.data,
      metadata: e.metadata,
      recordedAt: e.recordedAt.toISOString(),
    }),
  );
}

/** What the database assigns at insert, plus the content hash and the previous link. */
export interface ChainLink {
  seq: number;
  position: number;
  transactionId: string;
  streamVersion: number;
  contentHash: string;
  prevHash: string | null;
}

export function linkHash(l: ChainLink): string {
  return sha256Hex(
    canonicalJson({
      seq: l.seq,
      position: l.position,
      transactionId: l.transactionId,
      streamVersion: l.streamVersion,
      contentHash: l.contentHash,
      prevHash: l.prevHash,
    }),
  );
}
