import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { manifestDigestSchema } from '@ito/contracts';
import { idToken } from '@ito/runs';
import { defineRoute, refParams, type RegisteredRoute } from '../http/route.js';
import type { Resources } from '../resources.js';
import type { Principal } from '../auth/principal.js';
import { decideConfirmation, requestConfirmation, showConfirmation } from '../services/confirmation-service.js';
import { checkNamedKey, type Decider } from '@ito/domain';

const requestBody = z.discriminatedUnion('action', [
  z.strictObject({
    action: z.literal('train.create'),
    booking_id: idToken,
    manifest: z.string().min(1).max(1024 * 1024),
    manifest_digest: manifestDigestSchema,
  }),
  z.strictObject({ action: z.enum(['run.cancel', 'run.cleanup', 'run.restart', 'booking.release']), run_id: idToken }),
]);

/**
 * The calling key, as the confirmation records it: its id and the principal holding it. A key that names no
 * principal may neither request nor decide (refused before anything is read or written).
 */
function keyOf(principal: Principal | null): Decider {
  const key = principal as Extract<Principal, { kind: 'key' }>;
  const named = { keyId: key.keyId, principal: key.principal };
  checkNamedKey(named);
  return named;
}

export function registerConfirmationRoutes(app: FastifyInstance, res: Resources, registry: RegisteredRoute[]): void {
  defineRoute(app, res, registry, {
    method: 'POST',
    url: '/confirmations',
    summary: 'Asks for a single-use approval bound to account, action, booking or run, manifest digest and cost. Returns an opaque reference that authorises nothing by itself.',
    access: { scope: 'runs:write' },
    body: requestBody,
    handler: async ({ tenantId, principal, body }) => ({ data: await requestConfirmation(res, tenantId, keyOf(principal), body), status: 201 }),
  });

  defineRoute(app, res, registry, {
    method: 'GET',
    url: '/confirmations/:ref',
    summary: 'A confirmation and what it would allow.',
    access: { authenticated: true },
    params: refParams,
    notFound: 'confirmation_not_found',
    handler: async ({ tenantId, params }) => ({ data: await showConfirmation(res, tenantId, params.ref) }),
  });

  for (const decision of ['approve', 'deny'] as const) {
    defineRoute(app, res, registry, {
      method: 'POST',
      url: `/confirmations/:ref/${decision}`,
      summary: decision === 'approve' ? 'Approves a pending confirmation (approver scope only).' : 'Denies a pending confirmation (approver scope only).',
      access: { scope: 'confirmations:approve' },
      params: refParams,
      notFound: 'confirmation_not_found',
      handler: async ({ tenantId, principal, params }) => ({ data: await decideConfirmation(res, tenantId, keyOf(principal), params.ref, decision) }),
    });
  }
}
