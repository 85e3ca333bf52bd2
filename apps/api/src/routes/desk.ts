import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ItoError } from '@ito/contracts';
import { GROUP_KEYS, type GroupKey } from '@ito/telemetry';
import { readsFleet } from '../auth/principal.js';
import { defineRoute, type RegisteredRoute } from '../http/route.js';
import type { Resources } from '../resources.js';
import { deskTelemetry } from '../services/desk-telemetry-service.js';

const DAY_MS = 86_400_000;
/** The longest window one query may sum over. */
const MAX_WINDOW_MS = 366 * DAY_MS;

const instant = z.iso.datetime({ offset: true }).describe('an ISO 8601 instant, e.g. 2026-11-01T00:00:00Z');

export const deskTelemetryQuery = z
  .strictObject({
    since: instant.optional().describe('start of the window (inclusive); default: 30 days before `until`'),
    until: instant.optional().describe('end of the window (exclusive); default: now'),
    group_by: z
      .string()
      .max(64)
      .regex(/^[a-z]+(,[a-z]+)*$/, 'a comma-separated list of run, booking, region, fabric, gpu')
      .optional()
      .describe('comma-separated: run, booking, region, fabric, gpu; default: region,fabric,gpu'),
    buckets: z.coerce.number().int().min(1).max(400).default(30).describe('how many equal parts of the window the goodput series has'),
  })
  .superRefine((q, ctx) => {
    const keys = (q.group_by ?? '').split(',').filter(Boolean);
    if (keys.some((k) => !(GROUP_KEYS as readonly string[]).includes(k)) || new Set(keys).size !== keys.length) {
      ctx.addIssue({ code: 'custom', path: ['group_by'], message: 'each of run, booking, region, fabric, gpu at most once' });
    }
  });

export function registerDeskRoutes(app: FastifyInstance, res: Resources, registry: RegisteredRoute[]): void {
  defineRoute(app, res, registry, {
    method: 'GET',
    url: '/desk/telemetry',
    summary: 'Goodput, badput by cause, interruption rate, checkpoint bandwidth, latencies and the effective price of a productive GPU-hour, grouped over a window (docs/telemetry.md).',
    access: { scope: 'desk:read' },
    query: deskTelemetryQuery,
    handler: async ({ query, principal, tenantId }) => {
      const to = query.until ? Date.parse(query.until) : res.now().getTime();
      const from = query.since ? Date.parse(query.since) : to - 30 * DAY_MS;
      if (!(from < to)) throw new ItoError('validation_failed', 'query: since must be before until');
      if (to - from > MAX_WINDOW_MS) throw new ItoError('validation_failed', 'query: the window may span at most 366 days');
      const groupBy = (query.group_by ?? 'region,fabric,gpu').split(',').filter(Boolean) as GroupKey[];
      // The fleet's figures are the operator's: a tenant's key (its admin key too) sums its own bookings only.
      const owner = readsFleet(principal) ? null : tenantId;
      return { data: await res.desk(() => deskTelemetry(res, { from, to, groupBy, buckets: query.buckets, tenantId: owner })) };
    },
  });
}
