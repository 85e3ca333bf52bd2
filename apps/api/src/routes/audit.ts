import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AUDIT_EVENTS_PAGE_MAX } from '@ito/contracts';
import { idToken } from '@ito/runs';
import { auditProjections } from '../audit/audit-projections.js';
import { defineRoute, type RegisteredRoute } from '../http/route.js';
import type { Resources } from '../resources.js';
import { auditDigest, auditRecords, auditReplay, parseAsOf } from '../services/audit-service.js';

export function registerAuditRoutes(app: FastifyInstance, res: Resources, registry: RegisteredRoute[]): void {
  defineRoute(app, res, registry, {
    method: 'GET',
    url: '/audit/events',
    summary: "The tenant's hash chain links in order, each with the stored event it seals; paged by `after` (a tenant sequence number).",
    access: { scope: 'audit:read' },
    query: z.strictObject({ after: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0), limit: z.coerce.number().int().min(1).max(AUDIT_EVENTS_PAGE_MAX).default(500) }),
    handler: async ({ tenantId, query }) => ({ data: await auditRecords(res, tenantId, query.after, query.limit) }),
  });

  defineRoute(app, res, registry, {
    method: 'GET',
    url: '/audit/digest',
    summary: "The tenant's chain head, the newest signed digest the server published and the tenant's Merkle path to it.",
    access: { scope: 'audit:read' },
    handler: async ({ tenantId }) => ({ data: await auditDigest(res, tenantId) }),
  });

  defineRoute(app, res, registry, {
    method: 'GET',
    url: '/audit/replay',
    summary: "Rebuilds every projection from the tenant's events into a scratch schema and reports each difference from the live rows by run and field; with `as_of`, the runs as they stood then.",
    access: { scope: 'audit:read' },
    query: z.strictObject({ as_of: z.string().min(1).max(40).optional(), run_id: idToken.optional() }),
    handler: async ({ tenantId, query }) => {
      const asOf = parseAsOf(query.as_of);
      return { data: await res.replay(() => auditReplay(res, auditProjections, tenantId, asOf, query.run_id)) };
    },
  });
}
