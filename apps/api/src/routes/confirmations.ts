import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { defineRoute, refParams, type RegisteredRoute } from '../http/route.js';
import type { Resources } from '../resources.js';
import { decideConfirmation, requestConfirmation, showConfirmation } from '../services/confirmation-service.js';

const requestBody = z.discriminatedUnion('action', [
  z.strictObject({
    action: z.literal('train.create'),
    booking_id: z.string().min(1).max(128),
    manifest: z.string().min(1).max(1024 * 1024),
    manifest_digest: z.string().min(1).max(128),
  }),
  z.strictObject({ action: z.enum(['run.cancel', 'run.cleanup', 'run.restart', 'booking.release']), run_id: z.string().min(1).max(128) }),
]);

export function registerConfirmationRoutes(app: FastifyInstance, res: Resources, registry: RegisteredRoute[]): void {
  defineRoute(app, res, registry, {
    method: 'POST',
    url: '/confirmations',
    summary: 'Asks for a single-use approval bound to account, action, booking or run, manifest digest and cost. Returns an opaque reference that authorises nothing by itself.',
    access: { scope: 'runs:write' },
    body: requestBody,
    handler: async ({ tenantId, actor, body }) => ({ data: await requestConfirmation(res, tenantId, actor, body), status: 201 }),
  });

  defineRoute(app, res, registry, {
    method: 'GET',
    url: '/confirmations/:ref',
    summary: 'A confirmation and what it would allow.',
    access: { authenticated: true },
    params: refParams,
    handler: async ({ tenantId, params }) => ({ data: await showConfirmation(res, tenantId, params.ref) }),
  });

  for (const decision of ['approve', 'deny'] as const) {
    defineRoute(app, res, registry, {
      method: 'POST',
      url: `/confirmations/:ref/${decision}`,
      summary: decision === 'approve' ? 'Approves a pending confirmation (approver scope only).' : 'Denies a pending confirmation (approver scope only).',
      access: { scope: 'confirmations:approve' },
      params: refParams,
      handler: async ({ tenantId, actor, params }) => ({ data: await decideConfirmation(res, tenantId, actor, params.ref, decision) }),
    });
  }
}
