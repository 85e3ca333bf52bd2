import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { ItoError, fail } from '@ito/contracts';
import type { ApiDeps } from './deps.js';
import { createMetricsRegistry, registerHealthRoutes } from './routes/health.js';

/** Largest request body the API reads; a manifest is at most 1 MiB and travels inside JSON. */
export const BODY_LIMIT_BYTES = 2 * 1024 * 1024;

/** Builds the Fastify app. Listening is the caller's job, so tests and the server share one construction. */
export async function buildApp(deps: ApiDeps): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(given) ? given : `req_${crypto.randomUUID()}`;
    },
    requestIdLogLabel: 'request_id',
    disableRequestLogging: false,
  });

  app.addHook('onSend', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });

  app.setErrorHandler((err, req, reply) => {
    if (err instanceof ItoError) {
      return reply.code(err.status).send(err.toEnvelope());
    }
    const e = err as { statusCode?: number; code?: string; validation?: unknown };
    if (e.validation || e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || e.statusCode === 400) {
      return reply.code(400).send(fail('validation_failed', 'the request body is not valid JSON of the expected shape'));
    }
    if (e.statusCode === 413) {
      return reply.code(413).send(fail('validation_failed', `the request body is larger than ${BODY_LIMIT_BYTES} bytes`));
    }
    req.log.error({ err }, 'unhandled error');
    return reply.code(500).send(fail('internal_error', `internal error; quote request id ${req.id}`));
  });

  app.setNotFoundHandler((req, reply) => reply.code(404).send(fail('not_found', `no route ${req.method} ${req.url.split('?')[0]}`)));

  const registry = createMetricsRegistry();
  registerHealthRoutes(app, deps.readiness, registry);
  await app.ready();
  return app;
}
