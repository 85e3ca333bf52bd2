import { canonicalFields, canonicalKeys, jsonNumber, jsonString, sha256Hex } from '../canonical-json.js';
import { LastJsonString, nullableNumber, nullableString } from '../hashing.js';

/** One link of a tenant's own chain: what the sealer knows of the event, plus the tenant's previous link. */
export interface TenantLink {
  tenantId: string;
  tenantSeq: number;
  position: number;
  streamVersion: number;
  contentHash: string;
  prevHash: string | null;
}

/** sha256 over the canonical JSON of the link's fields (schema.ts `tenant_chain`, docs/audit.md). */
const TENANT_LINK_KEYS = canonicalKeys('contentHash', 'position', 'prevHash', 'streamVersion', 'tenantId', 'tenantSeq');

export function tenantLinkHash(l: TenantLink): string {
  return sha256Hex(canonicalFields(TENANT_LINK_KEYS, [l.contentHash, l.position, l.prevHash, l.streamVersion, l.tenantId, l.tenantSeq]));
}

const tenantJson = new LastJsonString();

/** tenantLinkHash's very text (TENANT_LINK_KEYS' order), built from the members as they are: a verify's once per link. */
export function tenantLinkHashOf(contentHash: string, position: number, prevHash: string | null, streamVersion: number | null, tenantId: string, tenantSeq: number): string {
  return sha256Hex(
    `{"contentHash":${jsonString(contentHash)},"position":${jsonNumber(position)},"prevHash":${nullableString(prevHash)},` +
      `"streamVersion":${nullableNumber(streamVersion)},"tenantId":${tenantJson.of(tenantId)},"tenantSeq":${jsonNumber(tenantSeq)}}`,
  );
}
