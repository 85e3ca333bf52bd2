import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { CLIENT_MANIFEST_CODES, ERROR_CODES, type ErrorCode } from '@ito/contracts';
import { OPERATIONS, type OperationDoc } from './operations.js';
import type { RegisteredRoute } from './route.js';

/** A public route outside defineRoute (health, metrics, the documents themselves), described by hand. */
export interface PlainRoute {
  method: 'GET';
  url: string;
  summary: string;
  /** What the body is: the JSON envelope, a bare JSON document, Prometheus text, an HTML page or a static asset. */
  response: 'envelope' | 'json' | 'text' | 'html' | 'asset';
  /** Left out of the per-credential request limit (health and metrics): no rate_limited from that limit. */
  unlimited?: true;
  /** Answers 503 with internal_error while a dependency is down (readiness). */
  notReady?: true;
  /** Computed a few at a time whatever the request limit: past its admission it answers rate_limited (metrics). */
  admitted?: true;
}

const plainResponses: Record<PlainRoute['response'], Record<string, unknown>> = {
  envelope: { '200': { description: 'The JSON envelope with ok true.', content: { 'application/json': { schema: { $ref: '#/components/schemas/OkEnvelope' } } } } },
  json: { '200': { description: 'A JSON document (not wrapped in the envelope).', content: { 'application/json': { schema: { type: 'object' } } } } },
  text: { '200': { description: 'Prometheus text exposition.', content: { 'text/plain': { schema: { type: 'string' } } } } },
  html: { '200': { description: 'An HTML page.', content: { 'text/html': { schema: { type: 'string' } } } } },
  asset: { '200': { description: 'A static script or stylesheet.', content: { 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } } } } },
};

/** The codes the server can answer with: the ones only the CLI raises (status `—` in docs/contract.md) are not. */
export const CLIENT_ONLY_CODES = [
  ...CLIENT_MANIFEST_CODES,
  'audit_verification_failed',
  'timeout',
  'transport_ambiguous',
  'connect_failed',
] as const satisfies readonly ErrorCode[];

const SERVER_CODES = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((c) => !(CLIENT_ONLY_CODES as readonly string[]).includes(c));

/** The envelope of packages/contracts/src/envelope.ts, as JSON Schema: one shape for success, one for refusal. */
const envelopeSchemas = {
  OkEnvelope: {
    type: 'object',
    description: 'The answer of a call that did what it was asked.',
    required: ['ok', 'live_api_contacted', 'notice', 'data'],
    properties: {
      ok: { type: 'boolean', const: true },
      live_api_contacted: { type: 'boolean' },
      notice: { type: ['string', 'null'], description: 'One human sentence, e.g. that an idempotent answer was replayed.' },
      data: { description: 'What the route answers (docs/contract.md, "Key fields").' },
    },
  },
  ErrorEnvelope: {
    type: 'object',
    description: 'The answer of a refused call: a stable code the caller branches on, never a secret in the message.',
    required: ['ok', 'live_api_contacted', 'notice', 'error'],
    properties: {
      ok: { type: 'boolean', const: false },
      live_api_contacted: { type: 'boolean' },
      notice: { type: ['string', 'null'] },
      error: {
        type: 'object',
        required: ['code', 'message', 'retryable'],
        properties: {
          code: { $ref: '#/components/schemas/ErrorCode' },
          message: { type: 'string' },
          retryable: { type: 'boolean', description: 'The same request may succeed later without anything else changing.' },
          details: { type: 'object', description: 'Machine-readable facts (a JSON path, a limit, a wait); never a secret.' },
        },
      },
    },
  },
  ErrorCode: { type: 'string', description: 'The stable error codes the server answers with (docs/contract.md, "Error codes").', enum: SERVER_CODES },
};

/** Statuses to the codes an operation can answer with, each status once, codes in a stable order. */
export type Refusals = Map<number, ErrorCode[]>;

function addRefusal(out: Refusals, code: ErrorCode, status: number = ERROR_CODES[code].status): void {
  const codes = out.get(status) ?? [];
  if (!codes.includes(code)) codes.push(code);
  out.set(status, codes);
}

/**
 * The refusals a route declared through defineRoute can answer with: those of its kind (from its access, path,
 * query, body and Idempotency-Key) and those its own gates raise (OPERATIONS). The framework's answers are in:
 * a body too large (413) or not JSON (415), a path id too long (its not-found code) or not UTF-8 (400).
 */
export function refusalsOf(r: RegisteredRoute, specific: readonly ErrorCode[] = []): Refusals {
  const out: Refusals = new Map();
  if (!('public' in r.access)) {
    addRefusal(out, 'unauthenticated');
    addRefusal(out, 'credential_revoked');
    addRefusal(out, 'forbidden');
  }
  if (r.idempotencyKey) for (const c of ['idempotency_key_required', 'idempotency_key_invalid', 'idempotency_key_reused', 'idempotency_in_progress'] as const) addRefusal(out, c);
  if (r.params) {
    addRefusal(out, r.notFound ?? 'not_found');
    addRefusal(out, 'validation_failed');
  }
  if (r.query) addRefusal(out, 'validation_failed');
  // Fastify reads the body of every POST, declared or not: one too large, not JSON or malformed is refused.
  if (r.body || r.method === 'POST') {
    addRefusal(out, 'validation_failed');
    addRefusal(out, 'validation_failed', 413);
    addRefusal(out, 'validation_failed', 415);
  }
  for (const c of specific) addRefusal(out, c);
  addRefusal(out, 'rate_limited');
  addRefusal(out, 'internal_error');
  return out;
}

/** The refusals of a plain route: rate limits unless it is exempt, readiness' 503, and internal errors. */
export function plainRefusalsOf(r: PlainRoute): Refusals {
  const out: Refusals = new Map();
  if (!r.unlimited || r.admitted) addRefusal(out, 'rate_limited');
  if (r.notReady) addRefusal(out, 'internal_error', 503);
  addRefusal(out, 'internal_error');
  return out;
}

/**
 * The project grants no licence (its packages are private): the document says so rather than leave the field
 * out, which generators and linters read as "unknown".
 */
const LICENSE = { name: 'Proprietary: all rights reserved' };

const RETRY_AFTER = { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } } };

/** One response per status, each the error envelope narrowed to the codes that status carries here. */
function errorResponses(refusals: Refusals): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, codes] of [...refusals].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: `Refused: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
      ...(status === 429 ? { headers: RETRY_AFTER } : {}),
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: '#/components/schemas/ErrorEnvelope' },
              { type: 'object', required: ['error'], properties: { error: { type: 'object', required: ['code'], properties: { code: { type: 'string', enum: codes } } } } },
            ],
          },
        },
      },
    };
  }
  return out;
}

function okResponses(statuses: readonly number[]): Record<string, unknown> {
  const ok = { content: { 'application/json': { schema: { $ref: '#/components/schemas/OkEnvelope' } } } };
  return Object.fromEntries(
    statuses.map((s) => [String(s), { description: s === 201 ? 'Created: the JSON envelope with ok true.' : 'The JSON envelope with ok true.', ...ok }]),
  );
}

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

/**
 * The row of OPERATIONS for a route. A route without one, or two routes with one operationId, stop the server
 * from starting: generated clients name their methods after these, so they must exist and be unique.
 */
function operationOf(key: string, table: Readonly<Record<string, OperationDoc>>, seen: Map<string, string>): OperationDoc {
  const op = table[key];
  if (!op) throw new Error(`OpenAPI: no operationId for ${key}; add its row to apps/api/src/http/operations.ts`);
  const other = seen.get(op.operationId);
  if (other) throw new Error(`OpenAPI: ${key} and ${other} share the operationId ${op.operationId}`);
  seen.set(op.operationId, key);
  return op;
}

/**
 * The OpenAPI 3.1 document, built from the same zod schemas that validate each route, so the document cannot
 * drift from what the server accepts.
 */
export function buildOpenApi(
  routes: readonly RegisteredRoute[],
  version: string,
  plain: readonly PlainRoute[] = [],
  table: Readonly<Record<string, OperationDoc>> = OPERATIONS,
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const seen = new Map<string, string>();
  for (const r of plain) {
    const op = operationOf(`${r.method} ${r.url}`, table, seen);
    (paths[r.url] ??= {})[r.method.toLowerCase()] = {
      operationId: op.operationId,
      summary: r.summary,
      description: 'Access: none.',
      security: [],
      parameters: [],
      responses: { ...plainResponses[r.response], ...errorResponses(plainRefusalsOf(r)) },
    };
  }
  for (const r of routes) {
    const op = operationOf(`${r.method} ${r.url}`, table, seen);
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
      operationId: op.operationId,
      summary: r.summary,
      description: `Access: ${scope}.`,
      security,
      parameters,
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(r.body) } } } } : {}),
      responses: { ...okResponses(op.success ?? [200]), ...errorResponses(refusalsOf(r, op.refusals)) },
    };
  }
  const documented = new Set([...plain, ...routes].map((r) => `${r.method} ${r.url}`));
  const stale = Object.keys(table).filter((k) => !documented.has(k));
  if (stale.length > 0) throw new Error(`OpenAPI: operations.ts names routes that are not served: ${stale.join(', ')}`);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Itô Training API',
      version,
      description: 'The control plane that turns a reviewed training manifest into a run on booked GPU nodes, through fail-closed gates.',
      license: LICENSE,
    },
    servers: [{ url: '/' }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, schemas: envelopeSchemas },
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
