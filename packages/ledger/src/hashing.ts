import { canonicalFields, canonicalKeys, jsonNumber, jsonString, sha256Hex } from './canonical-json.js';

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

/**
 * contentHash of an event whose data and metadata are given as their canonical JSON texts and whose other
 * members are given as they are: the very text contentHash hashes (CONTENT_KEYS' order, each member written as
 * canonicalJson writes it), built without an object to walk. A verify computes it once per event; the tests
 * hold it equal to contentHash on adversarial values.
 */
export function contentHashOfTexts(dataJson: string, metadataJson: string, recordedAt: Date, schemaVersion: number | null, streamId: string | null, tenantId: string | null, type: string | null): string {
  return sha256Hex(
    `{"data":${dataJson},"metadata":${metadataJson},"recordedAt":${isoJson.of(isoOf(recordedAt))},"schemaVersion":${nullableNumber(schemaVersion)},` +
      `"streamId":${nullableString(streamId)},"tenantId":${tenantJson.of(tenantId)},"type":${typeJson.of(type)}}`,
  );
}

export const nullableNumber = (n: number | null): string => (n === null ? 'null' : jsonNumber(n));
export const nullableString = (s: string | null): string => (s === null ? 'null' : jsonString(s));

/**
 * A text's JSON (`toJson`; `null` for a null), remembering the last text and its answer: a walk's links repeat
 * their tenant, type, instant, transaction id and often data from one to the next, and a comparison costs less
 * than the escape check or the canonicalisation and the new text.
 */
export class LastJsonString {
  private last: string | null = null;
  private json = 'null';

  constructor(private readonly toJson: (s: string) => string = jsonString) {}

  of(s: string | null): string {
    if (s !== this.last) {
      this.json = s === null ? 'null' : this.toJson(s);
      this.last = s;
    }
    return this.json;
  }
}

const isoJson = new LastJsonString();
const tenantJson = new LastJsonString();
const typeJson = new LastJsonString();
const txidJson = new LastJsonString();

/** The events of one append share their recording time: the last instant's ISO text is kept (by its value). */
let lastInstant = Number.NaN;
let lastIso = '';
export function isoOf(d: Date): string {
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

/** linkHash's very text (LINK_KEYS' order), built from the members as they are, for a verify's once per link. */
export function linkHashOf(contentHash: string, position: number, prevHash: string | null, seq: number, streamVersion: number | null, transactionId: string | null): string {
  return sha256Hex(
    `{"contentHash":${jsonString(contentHash)},"position":${jsonNumber(position)},"prevHash":${nullableString(prevHash)},"seq":${jsonNumber(seq)},` +
      `"streamVersion":${nullableNumber(streamVersion)},"transactionId":${txidJson.of(transactionId)}}`,
  );
}
