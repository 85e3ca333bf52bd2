import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { manifestDigestSchema } from '@ito/contracts';
import { idToken } from '@ito/runs';
import { defineRoute, idParams, type RegisteredRoute } from '../http/route.js';
import { eligibilityIdSchema } from '../services/booking-service.js';
import type { Resources } from '../resources.js';
import { runLifecycle, type LifecycleAction } from '../services/lifecycle-service.js';
import { findRuns, showRun, showRunCheckpoints, showRunEvents, showRunLogs, showRunMetrics } from '../services/run-read-service.js';
import { noLiveNodeNotice } from '../services/run-waiting.js';
import { train } from '../services/train-service.js';

const confirmationRef = z
  .union([z.literal(''), idToken])
  .optional()
  .describe('An approved confirmation reference (cfm_ and 32 hex digits). Required: missing or empty answers confirmation_required (428).');

export const trainBody = z.strictObject({
  booking_id: idToken,
  manifest: z.string().min(1).max(1024 * 1024),
  manifest_digest: manifestDigestSchema,
  // Required by the gate, not by the shape: a missing or empty reference answers confirmation_required (428).
  confirmation_ref: confirmationRef,
  eligibility_id: eligibilityIdSchema.optional(),
});

const lifecycleBody = z.strictObject({
  confirmation_ref: confirmationRef,
  release_booking: z.boolean().optional(),
  release_confirmation_ref: idToken.optional(),
});

const replayNotice = (runId: string) => `replayed: this Idempotency-Key already answered for run ${runId}; nothing new was done`;

export function registerRunRoutes(app: FastifyInstance, res: Resources, registry: RegisteredRoute[]): void {
  defineRoute(app, res, registry, {
    method: 'POST',
    url: '/runs',
    summary: 'Starts a run after every fail-closed gate passed: booking, manifest, confirmation, idempotency and server-side validation.',
    access: { scope: 'runs:write' },
    idempotencyKey: true,
    body: trainBody,
    handler: async ({ idempotencyKey, tenantId, actor, body }) => {
      const { result, replayed } = await train(res, tenantId, actor, idempotencyKey, body);
      // Accepted either way: nodes may dial in later. A booking with no live node is said now, not after minutes in planning.
      return { data: result, status: replayed ? 200 : 201, notice: replayed ? replayNotice(result.run_id) : await noLiveNodeNotice(res, tenantId, result.booking_id) };
    },
  });

  defineRoute(app, res, registry, {
    method: 'GET',
    url: '/runs',
    summary: "The tenant's runs, newest first; ?idempotency_key= finds the run a key created.",
    access: { scope: 'runs:read' },
    query: z.object({ idempotency_key: z.string().min(1).max(255).optional(), limit: z.coerce.number().int().min(1).max(500).default(50) }),
    handler: async ({ tenantId, query }) => ({ data: await findRuns(res, tenantId, query.idempotency_key, query.limit) }),
  });

  defineRoute(app, res, registry, {
    method: 'GET',
    url: '/runs/:id',
    summary: 'A run: state, stage, booking, manifest digest, idempotency key.',
    access: { scope: 'runs:read' },
    params: idParams,
    handler: async ({ tenantId, params }) => ({ data: await showRun(res, tenantId, params.id) }),
  });

  defineRoute(app, res, registry, {
    method: 'GET',
    url: '/runs/:id/events',
    summary: "The run's events from the ledger.",
    access: { scope: 'runs:read' },
    params: idParams,
    handler: async ({ tenantId, params }) => ({ data: await showRunEvents(res, tenantId, params.id) }),
  });

  defineRoute(app, res, registry, {
    method: 'GET',
    url: '/runs/:id/logs',
    summary: "The run's log lines, paged by cursor.",
    access: { scope: 'runs:read' },
    params: idParams,
    query: z.object({ cursor: z.coerce.number().int().min(0).default(0), limit: z.coerce.number().int().min(1).max(1000).default(200) }),
    handler: async ({ tenantId, params, query }) => ({ data: await showRunLogs(res, tenantId, params.id, query.cursor, query.limit) }),
  });

  defineRoute(app, res, registry, {
    method: 'GET',
    url: '/runs/:id/metrics',
    summary: "The run's progress metrics.",
    access: { scope: 'runs:read' },
    params: idParams,
    handler: async ({ tenantId, params }) => ({ data: await showRunMetrics(res, tenantId, params.id) }),
  });

  defineRoute(app, res, registry, {
    method: 'GET',
    url: '/runs/:id/checkpoints',
    summary: "The run's saved checkpoints.",
    access: { scope: 'runs:read' },
    params: idParams,
    handler: async ({ tenantId, params }) => ({ data: await showRunCheckpoints(res, tenantId, params.id) }),
  });

  for (const action of ['cancel', 'cleanup', 'restart'] as const satisfies readonly LifecycleAction[]) {
    defineRoute(app, res, registry, {
      method: 'POST',
      url: `/runs/:id/${action}`,
      summary: `${action[0]!.toUpperCase()}${action.slice(1)}s a run; needs its own run.${action} confirmation and Idempotency-Key.`,
      access: { scope: 'runs:write' },
      idempotencyKey: true,
      params: idParams,
      body: lifecycleBody,
      handler: async ({ idempotencyKey, tenantId, actor, params, body }) => {
        const { result, replayed } = await runLifecycle(res, tenantId, actor, idempotencyKey, action, { run_id: params.id, ...body });
        return { data: result, notice: replayed ? replayNotice(result.run_id) : null };
      },
    });
  }
}
