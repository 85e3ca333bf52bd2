import { canonicalFields, canonicalKeys, sha256Hex } from './canonical-json.js';

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

const CONTENT_KEYS = canonicalKeys('data', 'metadata', 'recordedAt', 'schemaVersion', 'streamId', 'tenantId', 'type');

/** sha256 over the canonical JSON of {tenantId, streamId, type, schemaVersion, data, metadata, recordedAt (ISO)}. */
export function contentHash(e: EventContent): string {
  return sha256Hex(canonicalFields(CONTENT_KEYS, [e.data, e.metadata, isoOf(e.recordedAt), e.schemaVersion, e.streamId, e.tenantId, e.type]));
}

/** The events of one append share their recording time: the last instant's ISO text is kept (by its value). */
let lastInstant = Number.NaN;
let lastIso = '';
function isoOf(d: Date): string {
  // Anything but a Date (NaN, never equal) and an invalid Date go to toISOString, and throw there as before.
  const t = d instanceof Date ? d.getTime() : Number.NaN;
  if (t !== lastInstant) {
    lastIso = d.toISOString();
    lastInstant = t;
  }
  return lastIso;
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

const LINK_KEYS = canonicalKeys('contentHash', 'position', 'prevHash', 'seq', 'streamVersion', 'transactionId');

/** sha256 over the canonical JSON of {seq, position, transactionId, streamVersion, contentHash, prevHash}. */
export function linkHash(l: ChainLink): string {
  return sha256Hex(canonicalFields(LINK_KEYS, [l.contentHash, l.position, l.prevHash, l.seq, l.streamVersion, l.transactionId]));
}
