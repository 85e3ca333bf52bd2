import { z } from 'zod';
import type { RegisteredRoute } from './route.js';

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
export function buildOpenApi(routes: readonly RegisteredRoute[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
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
