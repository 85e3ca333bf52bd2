import type { KeyObject } from 'node:crypto';
import { verifyDigestSignature, type SignedDigest } from './digest.js';
import { rootFromProof, type ProofStep } from './merkle.js';

/** A tenant's leaf under a published digest and its Merkle path, as the server serves them. */
export interface DigestAnchor {
  leaf: { tenant_seq: number; hash: string };
  proof: ProofStep[];
}

/**
 * Where a walk "since the digest" may start for a tenant: after its leaf, once the leaf is shown to be under the
 * digest (its path reaches the signed root) and, with a key, the digest's signature verifies. A tenant with no
 * leaf under the digest had no link then: its walk starts at its first link. Free of any database, so the CLI
 * (over the API) and the server (over its tables) decide it alike.
 */
export function anchoredStart(
  tenantId: string,
  signed: SignedDigest,
  anchor: DigestAnchor | null,
  key: KeyObject | null,
): { from: { tenant_seq: number; hash: string } | null } | { reason: string } {
  if (key && !verifyDigestSignature(signed, key)) return { reason: "the published digest's signature does not verify with the given public key" };
  if (!anchor) return { from: null };
  const root = rootFromProof({ tenantId, tenantSeq: anchor.leaf.tenant_seq, hash: anchor.leaf.hash }, anchor.proof);
  if (root !== signed.digest.tenants_root) return { reason: "the anchor's path does not reach the published digest's root" };
  return { from: anchor.leaf };
}
