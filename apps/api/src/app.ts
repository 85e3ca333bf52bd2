import { createHash } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { ItoError, fail } from '@ito/contracts';
import type { ApiDeps } from './deps.js';
import { assertEveryRouteDocumented, buildOpenApi, trackServedRoutes } from './http/openapi.js';
import { registerRequestMetrics } from './http/request-metrics.js';
import type { RegisteredRoute } from './http/route.js';
import type { Resources } from './resources.js';
import { registerBookingRoutes } from './routes/bookings.js';
import { registerConfirmationRoutes } from './routes/confirmations.js';
import { HEALTH_ROUTES, createMetricsRegistry, registerHealthRoutes } from './routes/health.js';
import { registerIdentityRoutes } from './routes/identity.js';
import { registerRunRoutes } from './routes/runs.js';
import { SERVICE_ROUTES, registerServiceRoutes } from './routes/service.js';
import { createApiLedger } from './services/admin-service.js';

/** Largest request body the API reads; a manifest is at most 1 MiB and travels inside JSON. */
export const BODY_LIMIT_BYTES = 2 * 1024 * 1024;
export const API_VERSION = '0.1.0';

/** Builds the Fastify app. Listening is the caller's job, so tests and the server share one construction. */
export async function buildApp(deps: ApiDeps): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(given) ? given : `req_${crypto.randomUUID()}`;
    },
    // Every log line of a request carries its id under this label.
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
  });

  const servedRoutes = trackServedRoutes(app);
  app.addHook('onSend', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });

  app.setErrorHandler((err, req, reply) => {
    if (err instanceof ItoError) {
      if (err.status >= 500) req.log.error({ code: err.code }, err.message);
      return reply.code(err.status).send(err.toEnvelope());
    }
    const e = err as { statusCode?: number; code?: string; validation?: unknown };
    if (e.statusCode === 429) {
      return reply.code(429).send(fail('rate_limited', 'too many requests for this credential; retry after the Retry-After seconds'));
    }
    if (e.statusCode === 413) {
      return reply.code(413).send(fail('validation_failed', `the request body is larger than ${BODY_LIMIT_BYTES} bytes`));
    }
    if (e.validation || e.code?.startsWith('FST_ERR_CTP') || e.statusCode === 400 || e.statusCode === 415) {
      return reply.code(400).send(fail('validation_failed', 'the request body is not valid JSON of the expected shape'));
    }
    req.log.error({ err }, 'unhandled error');
    return reply.code(500).send(fail('internal_error', `internal error; quote request id ${req.id}`));
  });

  app.setNotFoundHandler((req, reply) => reply.code(404).send(fail('not_found', `no route ${req.method} ${req.url.split('?')[0]}`)));

  const registry = createMetricsRegistry();
  registerRequestMetrics(app, registry);
  registerHealthRoutes(app, deps.readiness, registry);

  let openapi: Record<string, unknown> | null = null;
  if (deps.pool) {
    const limit = deps.rateLimit ?? { max: 1200, timeWindowMs: 60_000 };
    await app.register(rateLimit, {
      global: true,
      max: limit.max,
      timeWindow: limit.timeWindowMs,
      // Per credential, never by the credential itself: a hash keeps keys out of the limiter's memory dumps.
      keyGenerator: (req) => {
        const auth = req.headers.authorization;
        return auth ? `cred:${createHash('sha256').update(auth).digest('hex').slice(0, 32)}` : `ip:${req.ip}`;
      },
      allowList: (req) => /^\/(v1\/)?(healthz|readyz|metrics)$/.test(req.url.split('?')[0] ?? ''),
      errorResponseBuilder: (_req, context) => {
        const err = new ItoError('rate_limited', `too many requests for this credential; retry in ${Math.ceil(context.ttl / 1000)} s`);
        return Object.assign(err, { statusCode: 429 });
      },
    });

    const res: Resources = {
      pool: deps.pool,
      ledger: deps.ledger ?? createApiLedger(deps.pool),
      logger: deps.logger,
      now: deps.now ?? (() => new Date()),
    };
    const routes: RegisteredRoute[] = [];
    registerIdentityRoutes(app, res, routes);
    registerBookingRoutes(app, res, routes);
    registerConfirmationRoutes(app, res, routes);
    registerRunRoutes(app, res, routes);
    openapi = buildOpenApi(routes, API_VERSION, [...HEALTH_ROUTES, ...SERVICE_ROUTES]);
    registerServiceRoutes(app, openapi, API_VERSION);
  }

  await app.ready();
  if (openapi) assertEveryRouteDocumented(openapi, servedRoutes());
  return app;
}

