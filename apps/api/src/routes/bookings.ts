import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { manifestDigestSchema } from '@ito/contracts';
import { idToken } from '@ito/runs';
import { defineRoute, idParams, type RegisteredRoute } from '../http/route.js';
import type { Resources } from '../resources.js';
import { issueEligibility, listBookingViews, showBooking } from '../services/booking-service.js';
import { previewPlan } from '../services/plan-service.js';

const eligibilityBody = z
  .strictObject({
    expect: z
      .strictObject({
        gpu: z.string().optional(),
        nodes: z.number().int().positive().optional(),
        gpus_per_node: z.number().int().positive().optional(),
        region: z.string().optional(),
        fabric: z.string().optional(),
      })
      .optional(),
  })
  .optional();

export const planBody = z.strictObject({
  booking_id: idToken,
  manifest: z.string().min(1).max(1024 * 1024),
  manifest_digest: manifestDigestSchema.optional(),
});

export function registerBookingRoutes(app: FastifyInstance, res: Resources, registry: RegisteredRoute[]): void {
  defineRoute(app, res, registry, {
    method: 'GET',
    url: '/bookings',
    summary: "The tenant's bookings as the desk reports them.",
    access: { scope: 'runs:read' },
    handler: async ({ tenantId }) => ({ data: await listBookingViews(res, tenantId) }),
  });

  defineRoute(app, res, registry, {
    method: 'GET',
    url: '/bookings/:id',
    summary: 'One booking.',
    access: { scope: 'runs:read' },
    params: idParams,
    notFound: 'booking_not_found',
    handler: async ({ tenantId, params }) => ({ data: await showBooking(res, tenantId, params.id) }),
  });

  defineRoute(app, res, registry, {
    method: 'POST',
    url: '/bookings/:id/eligibility',
    summary: 'Fresh training eligibility, bound to account, booking, topology, region, fabric and term. Creates nothing.',
    access: { scope: 'runs:read' },
    params: idParams,
    notFound: 'booking_not_found',
    body: eligibilityBody,
    handler: async ({ tenantId, params, body }) => ({ data: await issueEligibility(res, tenantId, params.id, body?.expect) }),
  });

  defineRoute(app, res, registry, {
    method: 'POST',
    url: '/plans',
    summary: 'Parallelism, precision and cost for a manifest on a booking. Creates no run, no confirmation, no event.',
    access: { scope: 'runs:read' },
    body: planBody,
    handler: async ({ tenantId, body }) => ({ data: await previewPlan(res, tenantId, body) }),
  });
}
