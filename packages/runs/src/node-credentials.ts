import type pg from 'pg';

/**
 * The channel on which a node credential's revocation is announced, with the node id as payload. Each API
 * process caches the node credentials it verified and LISTENs here, so a revocation reaches every process as
 * soon as it commits (NOTIFY is delivered at commit, never for a transaction that rolled back).
 */
export const NODE_CREDENTIALS_CHANNEL = 'ito_node_credentials';

/**
 * Revokes a node's credential within the caller's transaction and announces it there: the update and the
 * NOTIFY commit together, so no API process can keep a revoked credential once the revocation is visible.
 * Revoking twice keeps the first time. Answers when it was revoked and whose node it is, or null when there is no
 * such node.
 */
export async function revokeNodeCredential(
  client: Pick<pg.ClientBase, 'query'>,
  nodeId: string,
  at: Date,
): Promise<{ revoked_at: Date; tenant_id: string } | null> {
  const { rows } = await client.query<{ revoked_at: Date; tenant_id: string }>(
    'update nodes set revoked_at = coalesce(revoked_at, $2) where node_id = $1 returning revoked_at, tenant_id',
    [nodeId, at],
  );
  if (!rows[0]) return null;
  await client.query('select pg_notify($1, $2)', [NODE_CREDENTIALS_CHANNEL, nodeId]);
  return rows[0];
}
