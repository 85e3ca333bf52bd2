import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CLIENT_ONLY_CODES, assertEveryRouteDocumented, buildOpenApi, documentedRoutes, refusalsOf } from '../src/http/openapi.js';
import { OPERATIONS } from '../src/http/operations.js';
import type { RegisteredRoute } from '../src/http/route.js';

const runRoute: RegisteredRoute = { method: 'GET', url: '/v1/runs/:id', summary: 'A run.', access: { scope: 'runs:read' }, params: z.object({ id: z.string() }) };
const table = { 'GET /v1/runs/:id': { operationId: 'status', refusals: ['not_found'] as const }, 'GET /healthz': { operationId: 'health' } };
const doc = buildOpenApi([runRoute], '0.0.0', [{ method: 'GET', url: '/healthz', summary: 'Up.', response: 'envelope', unlimited: true }], table);

type Op = { operationId: string; responses: Record<string, { content: Record<string, { schema: { allOf: [unknown, { properties: { error: { properties: { code: { enum: string[] } } } } }] } }> }> };
const opOf = (d: Record<string, unknown>, path: string, method: string) => (d.paths as Record<string, Record<string, Op>>)[path]![method]!;
const codesAt = (op: Op, status: number) => op.responses[String(status)]!.content['application/json']!.schema.allOf[1].properties.error.properties.code.enum;

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

describe('operationIds', () => {
  it('come from the operations table', () => {
    expect(opOf(doc, '/v1/runs/{id}', 'get').operationId).toBe('status');
    expect(opOf(doc, '/healthz', 'get').operationId).toBe('health');
  });

  it('refuse a route without a row, two rows sharing an id, and a row naming no served route', () => {
    expect(() => buildOpenApi([runRoute], '0.0.0', [], {})).toThrow(/no operationId for GET \/v1\/runs\/:id/);
    const twin = { ...runRoute, url: '/v1/runs/:id/events' };
    expect(() => buildOpenApi([runRoute, twin], '0.0.0', [], { 'GET /v1/runs/:id': { operationId: 'status' }, 'GET /v1/runs/:id/events': { operationId: 'status' } })).toThrow(
      /share the operationId status/,
    );
    expect(() => buildOpenApi([runRoute], '0.0.0', [], { ...table })).toThrow(/not served: GET \/healthz/);
  });

  it('are unique and URL-safe across the whole table', () => {
    const ids = Object.values(OPERATIONS).map((o) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z0-9]*$/);
  });

  it('name the CLI verbs that call the routes', () => {
    expect(OPERATIONS['POST /v1/runs']!.operationId).toBe('train');
    expect(OPERATIONS['GET /v1/runs/:id']!.operationId).toBe('status');
    expect(OPERATIONS['POST /v1/confirmations/:ref/approve']!.operationId).toBe('confirmApprove');
  });
});

describe('documented refusals', () => {
  it('are the error envelope narrowed to the codes of each status', () => {
    const op = opOf(doc, '/v1/runs/{id}', 'get');
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '401', '403', '404', '429', '500']);
    expect(codesAt(op, 401)).toEqual(['unauthenticated', 'credential_revoked']);
    expect(codesAt(op, 404)).toEqual(['not_found']);
    expect(op.responses['404']!.content['application/json']!.schema.allOf[0]).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
  });

  it('follow the route declaration: credentials, body, Idempotency-Key, its own not-found code', () => {
    const route: RegisteredRoute = {
      method: 'POST',
      url: '/v1/x/:id',
      summary: 'x',
      access: { scope: 'runs:write' },
      params: z.object({ id: z.string() }),
      notFound: 'booking_not_found',
      body: z.object({}),
      idempotencyKey: true,
    };
    const r = Object.fromEntries(refusalsOf(route, ['confirmation_required']));
    expect(r[400]).toEqual(['idempotency_key_required', 'idempotency_key_invalid', 'validation_failed']);
    expect(r[404]).toEqual(['booking_not_found']);
    expect(r[413]).toEqual(['validation_failed']);
    expect(r[415]).toEqual(['validation_failed']);
    expect(r[422]).toEqual(['idempotency_key_reused']);
    expect(r[428]).toEqual(['confirmation_required']);
    const publicRoute = Object.fromEntries(refusalsOf({ method: 'GET', url: '/v1/y', summary: 'y', access: { public: true } }));
    expect(Object.keys(publicRoute)).toEqual(['429', '500']);
  });

  it('never list a code only the client raises, nor one outside the ErrorCode schema', () => {
    const all = (doc.components as { schemas: { ErrorCode: { enum: string[] } } }).schemas.ErrorCode.enum;
    for (const c of CLIENT_ONLY_CODES) expect(all).not.toContain(c);
    for (const row of Object.values(OPERATIONS)) {
      for (const c of row.refusals ?? []) {
        expect(CLIENT_ONLY_CODES as readonly string[]).not.toContain(c);
        expect(all).toContain(c);
      }
    }
  });

  it('leave out exactly the codes docs/contract.md marks as raised only by the client (HTTP `—`)', () => {
    const contract = readFileSync(resolve(import.meta.dirname, '..', '..', '..', 'docs', 'contract.md'), 'utf8');
    const clientOnly = [...contract.matchAll(/^\| `([a-z_]+)` \| — \|/gm)].map((m) => m[1]);
    expect(clientOnly.sort()).toEqual([...CLIENT_ONLY_CODES].sort());
  });

  it('leave rate_limited out of an unlimited route', () => {
    const health = opOf(doc, '/healthz', 'get');
    expect(Object.keys(health.responses).sort()).toEqual(['200', '500']);
  });

  it('list rate_limited on an unlimited route that admits its requests a few at a time (metrics)', () => {
    const metrics = { method: 'GET', url: '/metrics', summary: 'Metrics.', response: 'text', unlimited: true, admitted: true } as const;
    const admitted = buildOpenApi([], '0.0.0', [metrics], { 'GET /metrics': { operationId: 'prometheusMetrics' } });
    expect(codesAt(opOf(admitted, '/metrics', 'get'), 429)).toEqual(['rate_limited']);
  });
});
