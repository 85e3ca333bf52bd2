import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { RegisteredRoute } from './route.js';

/** A public route outside defineRoute (health, metrics, the documents themselves), described by hand. */
export interface PlainRoute {
  method: 'GET';
  url: string;
  summary: string;
  /** What the body is: the JSON envelope, a bare JSON document, Prometheus text, an HTML page or a static asset. */
  response: 'envelope' | 'json' | 'text' | 'html' | 'asset';
}

const plainResponses: Record<PlainRoute['response'], Record<string, unknown>> = {
  envelope: { default: { description: 'The JSON envelope.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } } } },
  json: { '200': { description: 'A JSON document (not wrapped in the envelope).', content: { 'application/json': { schema: {} } } } },
  text: { '200': { description: 'Prometheus text exposition.', content: { 'text/plain': { schema: { type: 'string' } } } } },
  html: { '200': { description: 'An HTML page.', content: { 'text/html': { schema: { type: 'string' } } } } },
  asset: { '200': { description: 'A static script or stylesheet.', content: { 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } } } } },
};

const envelopeDoc = {
  type: 'object',
  required: ['ok', 'live_api_contacted', 'notice'],
  properties: {
    ok: { type: 'boolean' },
    live_api_contacted: { type: 'boolean' },
    notice: { type: ['string', 'null'] },
    data: {},
    error: {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' }, retryable: { type: 'boolean' }, details: { type: 'object' } },
    },
  },
};

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

/**
 * The OpenAPI 3.1 document, built from the same zod schemas that validate each route, so the document cannot
 * drift from what the server accepts.
 */
export function buildOpenApi(routes: readonly RegisteredRoute[], version: string, plain: readonly PlainRoute[] = []): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of plain) {
    (paths[r.url] ??= {})[r.method.toLowerCase()] = { summary: r.summary, description: 'Access: none.', security: [], parameters: [], responses: plainResponses[r.response] };
  }
  for (const r of routes) {
    const path = r.url.replace(/:([a-z_]+)/g, '{$1}');
    const parameters: unknown[] = [];
    if (r.params) {
      const shape = jsonSchema(r.params) as { properties?: Record<string, unknown> };
      for (const [name, schema] of Object.entries(shape.properties ?? {})) parameters.push({ name, in: 'path', required: true, schema });
    }
    if (r.query) {
      const shape = jsonSchema(r.query) as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, schema] of Object.entries(shape.properties ?? {})) {
        parameters.push({ name, in: 'query', required: shape.required?.includes(name) ?? false, schema });
      }
    }
    if (r.idempotencyKey) {
      parameters.push({ name: 'Idempotency-Key', in: 'header', required: true, schema: { type: 'string', minLength: 1, maxLength: 255 } });
    }
    const security = 'public' in r.access ? [] : [{ bearer: [] }];
    const scope = 'scope' in r.access ? r.access.scope : 'node' in r.access ? 'node credential' : 'public' in r.access ? 'none' : 'any credential';
    (paths[path] ??= {})[r.method.toLowerCase()] = {
      summary: r.summary,
      description: `Access: ${scope}.`,
      security,
      parameters,
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(r.body) } } } } : {}),
      responses: {
        '200': { description: 'The JSON envelope with ok true.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } } },
        default: { description: 'The JSON envelope with ok false and a stable error code.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } } },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Itô Training API', version },
    servers: [{ url: '/' }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, schemas: { Envelope: envelopeDoc } },
    paths,
  };
}

/** Collects every route Fastify registers from here on (HEAD twins of GET routes aside), as `METHOD /path`. */
export function trackServedRoutes(app: FastifyInstance): () => string[] {
  const served: string[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') served.push(`${method} ${route.url}`);
  });
  return () => [...served];
}

/** The routes an OpenAPI document describes, as `METHOD /path` with Fastify's `:param` syntax. */
export function documentedRoutes(doc: Record<string, unknown>): string[] {
  const paths = doc.paths as Record<string, Record<string, unknown>>;
  return Object.entries(paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{([a-z_]+)\}/g, ':$1')}`));
}

/** Fails the start of a server that would serve a route its OpenAPI document does not describe, or the reverse. */
export function assertEveryRouteDocumented(doc: Record<string, unknown>, served: readonly string[]): void {
  const documented = new Set(documentedRoutes(doc));
  const servedSet = new Set(served);
  const undocumented = [...servedSet].filter((r) => !documented.has(r));
  const unserved = [...documented].filter((r) => !servedSet.has(r));
  if (undocumented.length > 0 || unserved.length > 0) {
    throw new Error(`OpenAPI document out of step with the routes: undocumented [${undocumented.join(', ')}], not served [${unserved.join(', ')}]`);
  }
}
