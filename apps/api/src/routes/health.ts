import type { FastifyInstance } from 'fastify';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { fail, ok } from '@ito/contracts';
import type { ReadinessProbe } from '../deps.js';
import type { Admission } from '../http/admission.js';
import type { PlainRoute } from '../http/openapi.js';

/** The health routes as OpenAPI describes them, at the root and under /v1 alike. */
export const HEALTH_ROUTES: PlainRoute[] = ['', '/v1'].flatMap((prefix) => [
  { method: 'GET', url: `${prefix}/healthz`, summary: 'The process is up.', response: 'envelope', unlimited: true },
  { method: 'GET', url: `${prefix}/readyz`, summary: 'Every dependency answers (503 with the failing checks otherwise).', response: 'envelope', unlimited: true, notReady: true },
  { method: 'GET', url: `${prefix}/metrics`, summary: 'Prometheus metrics: requests, refusals by code, answer times, process; runs by state, queue depths, job durations, ledger append time, heartbeats, SLO latencies and breaches.', response: 'text', unlimited: true, admitted: true },
] satisfies PlainRoute[]);

/** The paths the per-credential request limit leaves out: an orchestrator's probes and the scraper never wait. */
export const UNLIMITED_PATHS: ReadonlySet<string> = new Set(HEALTH_ROUTES.filter((r) => r.unlimited).map((r) => r.url));

/** `/healthz` (the process is up), `/readyz` (every dependency answers) and `/metrics` (Prometheus text). */
export function registerHealthRoutes(app: FastifyInstance, probes: ReadinessProbe[], registry: Registry, admit: Admission): void {
  const routes = async (scope: FastifyInstance) => {
    scope.get('/healthz', async () => ok({ status: 'ok' }));

    scope.get('/readyz', async (_req, reply) => {
      const results = await Promise.all(
        probes.map(async (p) => {
          try {
            await withTimeout(p.check(), 2_000);
            return { name: p.name, ok: true };
          } catch (err) {
            app.log.warn({ probe: p.name, err: (err as Error).message }, 'readiness probe failed');
            return { name: p.name, ok: false };
          }
        }),
      );
      const checks = Object.fromEntries(results.map((r) => [r.name, r.ok ? 'ok' : 'failing']));
      if (results.every((r) => r.ok)) return ok({ status: 'ready', checks });
      return reply.code(503).send({ ...fail('internal_error', 'not ready: a dependency is not answering', { details: { checks } }) });
    });

    scope.get('/metrics', async (_req, reply) => {
      // Admitted a few at a time: a scrape reads shared stores, and a burst of them must not take the pool.
      const text = await admit(() => registry.metrics());
      reply.header('content-type', registry.contentType);
      return text;
    });
  };
  // Served at the root for orchestrators and under /v1 for clients that only know the API prefix.
  void app.register(routes);
  void app.register(routes, { prefix: '/v1' });
}

export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'ito_' });
  return registry;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}
