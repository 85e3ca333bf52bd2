import { hash } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { ItoError } from '@ito/contracts';
import { createApiLedger, isWellFormedCredential } from '@ito/runs';
import type { ApiDeps } from './deps.js';
import { AccessLogController } from './http/access-log.js';
import { BODY_LIMIT_BYTES, handleClientError, handleError, handleFrameworkError, handleNotFound } from './http/errors.js';
import { installStrictJsonBodies } from './http/json-body.js';
import { watchAnswersAgainstDocument } from './http/answer-conformance.js';
import { assertEveryRouteDocumented, buildOpenApi, trackServedRoutes } from './http/openapi.js';
import { registerRequestMetrics } from './http/request-metrics.js';
import { registerOperationsMetrics } from './metrics/operations-metrics.js';
import type { RegisteredRoute } from './http/route.js';
import type { Resources } from './resources.js';
import { createAssignmentNotifier } from './agent/assignment-notifier.js';
import { DEFAULT_AGENT_SETTINGS } from './agent/agent-settings.js';
import { createLivenessWriter } from './agent/liveness-writer.js';
import { heartbeatAdmission } from './agent/heartbeat-admission.js';
import { createNodeCredentialCache } from './auth/node-credential-cache.js';
import { registerAgentRoutes } from './routes/agent.js';
import { registerAuditRoutes } from './routes/audit.js';
import { registerBookingRoutes } from './routes/bookings.js';
import { registerConfirmationRoutes } from './routes/confirmations.js';
import { registerDeskRoutes } from './routes/desk.js';
import { HEALTH_ROUTES, UNLIMITED_PATHS, createMetricsRegistry, registerHealthRoutes } from './routes/health.js';
import { registerIdentityRoutes } from './routes/identity.js';
import { registerRunRoutes } from './routes/runs.js';
import { SERVICE_ROUTES, registerServiceRoutes } from './routes/service.js';
import { WindowCounter } from './http/window-counter.js';
import { deskAdmission } from './desk/desk-admission.js';
import { DEFAULT_METRICS_ADMISSION, DEFAULT_REPLAY_ADMISSION, admission } from './http/admission.js';
import { bearerFrom } from './auth/bearer.js';

export { BODY_LIMIT_BYTES };

const HEARTBEAT_PATHS = new Set(['/v1/agent/heartbeat', '/v1/agent/heartbeats']);
const isHeartbeat = (url: string): boolean => HEARTBEAT_PATHS.has(url.split('?')[0] ?? '');
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
    // Every log line of a request carries its id under this label; access lines carry route patterns, never URLs.
    logController: new AccessLogController({ requestIdLogLabel: 'request_id' }),
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: handleClientError,
  });
  installStrictJsonBodies(app);

  const servedRoutes = trackServedRoutes(app);
  const checkAnswersAgainst = deps.onUndocumentedAnswer ? watchAnswersAgainstDocument(app, deps.onUndocumentedAnswer) : null;
  app.addHook('onSend', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });

  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);

  const registry = createMetricsRegistry();
  registerRequestMetrics(app, registry);
  registerHealthRoutes(app, deps.readiness, registry, admission(deps.metricsAdmission ?? DEFAULT_METRICS_ADMISSION, 'the API is already computing as many metrics scrapes as it can'));

  let openapi: Record<string, unknown> | null = null;
  if (deps.pool) {
    const limit = deps.rateLimit ?? { max: 1200, timeWindowMs: 60_000 };
    await app.register(rateLimit, {
      global: true,
      max: limit.max,
      timeWindow: limit.timeWindowMs,
      // Per credential, never by the credential itself: a hash keeps keys out of the limiter's memory dumps. A
      // bearer that cannot be a credential shares its address's bucket, so inventing bearers buys no budget.
      // A node's heartbeats have their own allowance: a flood of its reports (or of its beats) spends only its own
      // kind's budget, so the beats that keep the node alive are never refused for the reports beside them.
      keyGenerator: (req) => {
        const secret = bearerFrom(req.headers.authorization);
        const who = secret && isWellFormedCredential(secret) ? `cred:${hash('sha256', secret, 'hex').slice(0, 32)}` : `ip:${req.ip}`;
        return isHeartbeat(req.url) ? `${who}:heartbeat` : who;
      },
      allowList: (req) => UNLIMITED_PATHS.has(req.url.split('?')[0] ?? ''),
      errorResponseBuilder: (_req, context) => {
        const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
        // The wait in the envelope too, so a client paging through a long read (ito audit verify, export) can
        // wait it out and go on instead of failing part way.
        const err = new ItoError('rate_limited', `too many requests for this credential; retry in ${seconds} s`, { retry_after_s: seconds });
        return Object.assign(err, { statusCode: 429 });
      },
    });

    const assignments = createAssignmentNotifier(deps.pool, deps.logger);
    // Before the server stops accepting: held long polls answer at once instead of holding the close up.
    app.addHook('preClose', async () => assignments.close());
    const nodeCredentials = createNodeCredentialCache(deps.pool, deps.logger, deps.nodeCredentialCache);
    app.addHook('onClose', async () => nodeCredentials.close());
    const liveness = createLivenessWriter(deps.pool, deps.livenessWriter);
    // After the last request ended: the beats it carried are written before the pool closes.
    app.addHook('onClose', async () => liveness.close());
    const metrics = registerOperationsMetrics(registry, deps.pool, deps.queues);
    const res: Resources = {
      pool: deps.pool,
      ledger: metrics.timed(deps.ledger ?? createApiLedger(deps.pool)),
      logger: deps.logger,
      now: deps.now ?? (() => new Date()),
      agent: deps.agent ?? DEFAULT_AGENT_SETTINGS,
      assignments,
      liveness,
      authFailures: new WindowCounter(deps.authFailureLimit?.max ?? 60, deps.authFailureLimit?.timeWindowMs ?? 60_000),
      nodeCredentials,
      heartbeats: heartbeatAdmission(deps.heartbeatAdmission),
      metrics,
      desk: deskAdmission(deps.deskAdmission),
      ...(deps.checkpointStorage ? { checkpointStorage: deps.checkpointStorage } : {}),
      replay: admission(deps.replayAdmission ?? DEFAULT_REPLAY_ADMISSION, 'the API is already replaying as many audits as it can'),
    };
    const routes: RegisteredRoute[] = [];
    registerIdentityRoutes(app, res, routes);
    registerBookingRoutes(app, res, routes);
    registerConfirmationRoutes(app, res, routes);
    registerRunRoutes(app, res, routes);
    registerAgentRoutes(app, res, routes);
    registerAuditRoutes(app, res, routes);
    registerDeskRoutes(app, res, routes);
    openapi = buildOpenApi(routes, API_VERSION, [...HEALTH_ROUTES, ...SERVICE_ROUTES]);
    registerServiceRoutes(app, openapi, API_VERSION);
    checkAnswersAgainst?.(openapi);
  }

  await app.ready();
  if (openapi) assertEveryRouteDocumented(openapi, servedRoutes());
  return app;
}

