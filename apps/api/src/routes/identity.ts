import type { FastifyInstance } from 'fastify';
import { defineRoute, type RegisteredRoute } from '../http/route.js';
import type { Resources } from '../resources.js';

export function registerIdentityRoutes(app: FastifyInstance, res: Resources, registry: RegisteredRoute[]): void {
  defineRoute(app, res, registry, {
    method: 'GET',
    url: '/auth/whoami',
    summary: 'Who the presented credential is: tenant, key id and scopes. Never the key itself.',
    access: { authenticated: true },
    handler: async ({ principal }) => {
      const p = principal as Extract<NonNullable<typeof principal>, { kind: 'key' }>;
      return { data: { tenant_id: p.tenantId, key_id: p.keyId, scopes: p.scopes } };
    },
  });

  defineRoute(app, res, registry, {
    method: 'POST',
    url: '/auth/logout',
    summary: 'Revokes the presented credential. Every later use answers credential_revoked.',
    access: { authenticated: true },
    handler: async ({ principal }) => {
      const p = principal as Extract<NonNullable<typeof principal>, { kind: 'key' }>;
      const revokedAt = await res.ledger.transaction(async (tx) => {
        const { rows } = await tx.client.query<{ revoked_at: Date }>(
          'update api_keys set revoked_at = coalesce(revoked_at, $3) where key_id = $1 and tenant_id = $2 returning revoked_at',
          [p.keyId, p.tenantId, res.now()],
        );
        await tx.append(`tenant-${p.tenantId}`, [{ type: 'ApiKeyRevoked', data: { key_id: p.keyId, by: 'logout' } }], {
          tenantId: p.tenantId,
          expectedVersion: 'any',
        });
        return rows[0]!.revoked_at;
      });
      return { data: { key_id: p.keyId, revoked_at: revokedAt.toISOString() } };
    },
  });
}
