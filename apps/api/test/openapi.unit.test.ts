import { describe, expect, it } from 'vitest';
import { assertEveryRouteDocumented, buildOpenApi, documentedRoutes } from '../src/http/openapi.js';

const doc = buildOpenApi(
  [{ method: 'GET', url: '/v1/runs/:id', summary: 'A run.', access: { scope: 'runs:read' } }],
  '0.0.0',
  [{ method: 'GET', url: '/healthz', summary: 'Up.', response: 'envelope' }],
);

describe('the OpenAPI document and the served routes', () => {
  it('lists documented routes in Fastify syntax', () => {
    expect(documentedRoutes(doc).sort()).toEqual(['GET /healthz', 'GET /v1/runs/:id']);
  });

  it('accepts exactly the routes it documents, and refuses a served route it omits or a documented one not served', () => {
    expect(() => assertEveryRouteDocumented(doc, ['GET /v1/runs/:id', 'GET /healthz'])).not.toThrow();
    expect(() => assertEveryRouteDocumented(doc, ['GET /v1/runs/:id', 'GET /healthz', 'POST /v1/secret'])).toThrow(/undocumented \[POST \/v1\/secret\]/);
    expect(() => assertEveryRouteDocumented(doc, ['GET /v1/runs/:id'])).toThrow(/not served \[GET \/healthz\]/);
  });
});
