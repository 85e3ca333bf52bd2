import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * Counts every request by method, route pattern and status, and refusals by their stable code, so an operator
 * can see which gate is refusing and how fast the API answers. Labels are route patterns, never raw URLs, so
 * ids (and anything a caller puts in a path) never become label values.
 */
export function registerRequestMetrics(app: FastifyInstance, registry: Registry): void {
  const requests = new Counter({
    name: 'ito_http_requests_total',
    help: 'HTTP requests by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'ito_http_refusals_total',
    help: 'Refused requests by route pattern and stable error code.',
    labelNames: ['route', 'code'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'ito_http_request_duration_seconds',
    help: 'Time to answer, by method and route pattern.',
    labelNames: ['method', 'route'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });

  app.addHook('onSend', async (req, reply, payload) => {
    if (reply.statusCode >= 400 && typeof payload === 'string' && payload.startsWith('{"ok":false')) {
      const code = /"code":"([a-z_]+)"/.exec(payload)?.[1];
      if (code) refusals.inc({ route: req.routeOptions.url ?? 'unmatched', code });
    }
    return payload;
  });

  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    requests.inc({ method: req.method, route, status: String(reply.statusCode) });
    duration.observe({ method: req.method, route }, reply.elapsedTime / 1000);
  });
}
