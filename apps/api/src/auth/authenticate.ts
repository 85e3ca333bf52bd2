import type pg from 'pg';
import { ItoError, type Scope } from '@ito/contracts';
import { hashSecret, isWellFormedCredential } from '@ito/runs';
import type { Principal } from './principal.js';
import { bearerFrom } from './bearer.js';
import type { NodeCredentialCache } from './node-credential-cache.js';
import { lookupNodeCredentials } from './node-credential-lookup.js';

/**
 * Resolves the Authorization header to a principal. No header → null (routes decide whether that is
 * allowed); an unknown credential → `unauthenticated`; a revoked one → `credential_revoked`. A bearer that is
 * not shaped like a credential this API issues is refused before any lookup, so a flood of bogus ones costs
 * no database round trip. A node credential this process verified before is answered from `nodes` (see
 * {@link NodeCredentialCache}) without a read: a node beats every few seconds for as long as its booking lasts.
 */
export async function authenticate(pool: pg.Pool, authorization: string | undefined, nodes?: NodeCredentialCache): Promise<Principal | null> {
  if (authorization === undefined) return null;
  const secret = bearerFrom(authorization);
  if (!secret) throw new ItoError('unauthenticated', 'the Authorization header must be "Bearer <credential>"');
  if (!isWellFormedCredential(secret)) throw new ItoError('unauthenticated', 'unknown credential');
  const hash = hashSecret(secret);
  if (secret.startsWith('ito_nc_')) {
    const cached = nodes?.get(hash);
    if (cached) return { kind: 'node', ...cached };
    const verdict = (await lookupNodeCredentials(pool, [hash], nodes)).get(hash)!;
    if ('node' in verdict) return { kind: 'node', ...verdict.node };
    throw verdict.refused === 'credential_revoked'
      ? new ItoError('credential_revoked', 'this node credential was revoked')
      : new ItoError('unauthenticated', 'unknown credential');
  }
  // Named: every authenticated request runs it, so each connection parses and plans it once.
  const { rows } = await pool.query<{ key_id: string; tenant_id: string; scopes: Scope[]; principal: string | null; revoked_at: Date | null }>({
    name: 'ito_api_key_by_hash',
    text: 'select key_id, tenant_id, scopes, principal, revoked_at from api_keys where secret_hash = $1',
    values: [hash],
  });
  const key = rows[0];
  if (!key) throw new ItoError('unauthenticated', 'unknown credential');
  if (key.revoked_at) throw new ItoError('credential_revoked', 'this credential was revoked');
  return { kind: 'key', tenantId: key.tenant_id, keyId: key.key_id, scopes: key.scopes, principal: key.principal };
}
