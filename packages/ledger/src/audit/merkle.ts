import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';

/** A tenant's chain head as of one global link: the leaf the published digest commits to. */
export interface TenantHead {
  tenantId: string;
  tenantSeq: number;
  hash: string;
}

export interface ProofStep {
  /** Which side the sibling sits on. */
  side: 'left' | 'right';
  hash: string;
}

// Domain-separated, so a leaf can never be passed off as an inner node (RFC 6962's 0x00 / 0x01 prefixes).
const h = (prefix: string, text: string) => createHash('sha256').update(prefix).update(text).digest('hex');

export function leafHash(head: TenantHead): string {
  return h('\u0000', canonicalJson({ tenantId: head.tenantId, tenantSeq: head.tenantSeq, hash: head.hash }));
}

const nodeHash = (left: string, right: string) => h('\u0001', left + right);

/** Leaves in tenant id order; an odd node is carried up unchanged. The root of no tenants is null. */
export function merkleRoot(heads: TenantHead[]): string | null {
  let level = sortHeads(heads).map(leafHash);
  if (level.length === 0) return null;
  while (level.length > 1) level = pairUp(level);
  return level[0]!;
}

/** The sibling hashes from the tenant's leaf to the root: they say nothing of the other tenants but their count. */
export function merkleProof(heads: TenantHead[], tenantId: string): ProofStep[] | null {
  let level = sortHeads(heads).map(leafHash);
  let index = sortHeads(heads).findIndex((x) => x.tenantId === tenantId);
  if (index < 0) return null;
  const proof: ProofStep[] = [];
  while (level.length > 1) {
    const sibling = index % 2 === 0 ? index + 1 : index - 1;
    if (sibling < level.length) proof.push({ side: index % 2 === 0 ? 'right' : 'left', hash: level[sibling]! });
    level = pairUp(level);
    index = Math.floor(index / 2);
  }
  return proof;
}

export function rootFromProof(head: TenantHead, proof: ProofStep[]): string {
  let acc = leafHash(head);
  for (const step of proof) acc = step.side === 'left' ? nodeHash(step.hash, acc) : nodeHash(acc, step.hash);
  return acc;
}

function pairUp(level: string[]): string[] {
  const next: string[] = [];
  for (let i = 0; i < level.length; i += 2) next.push(i + 1 < level.length ? nodeHash(level[i]!, level[i + 1]!) : level[i]!);
  return next;
}

function sortHeads(heads: TenantHead[]): TenantHead[] {
  return [...heads].sort((a, b) => (a.tenantId < b.tenantId ? -1 : a.tenantId > b.tenantId ? 1 : 0));
}
