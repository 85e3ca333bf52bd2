import type pg from 'pg';
import type { NodeCredentialCache, NodeIdentity } from './node-credential-cache.js';

/** What a node credential's hash is found to be: a node, or why it is refused. */
export type NodeCredentialVerdict = { node: NodeIdentity } | { refused: 'unauthenticated' | 'credential_revoked' };

/**
 * Node credentials by their hashes, in one read however many: unknown is `unauthenticated`, revoked is
 * `credential_revoked`, else the node, cached under the ticket taken before the read (so a revocation heard during
 * it is not undone). The bearer of a single request and the beats of a host's batch are checked by this one rule.
 */
export async function lookupNodeCredentials(pool: pg.Pool, hashes: readonly string[], nodes?: NodeCredentialCache): Promise<Map<string, NodeCredentialVerdict>> {
  const ticket = nodes?.ticket() ?? 0;
  const { rows } = await pool.query<{ credential_hash: string; node_id: string; tenant_id: string; booking_id: string; revoked_at: Date | null }>({
    // A request's bearer (one hash) and a batch's misses keep statements of their own, as they did before.
    name: hashes.length === 1 ? 'ito_node_by_credential_hash' : 'ito_nodes_by_credential_hashes',
    text: 'select credential_hash, node_id, tenant_id, booking_id, revoked_at from nodes where credential_hash = any($1::text[])',
    values: [hashes],
  });
  const byHash = new Map(rows.map((r) => [r.credential_hash, r]));
  const out = new Map<string, NodeCredentialVerdict>();
  for (const hash of hashes) {
    const node = byHash.get(hash);
    if (!node) out.set(hash, { refused: 'unauthenticated' });
    else if (node.revoked_at) out.set(hash, { refused: 'credential_revoked' });
    else {
      const identity = { tenantId: node.tenant_id, nodeId: node.node_id, bookingId: node.booking_id };
      nodes?.put(hash, identity, ticket);
      out.set(hash, { node: identity });
    }
  }
  return out;
}
