import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ItoError, ok, validate, vocabularyOf, type ErrorCode, type Scope } from '@ito/contracts';
import { idToken, looksLikeId } from '@ito/runs';
import { authenticate } from '../auth/authenticate.js';
import { requireNode, requireScope, type Principal } from '../auth/principal.js';
import type { Resources } from '../resources.js';
import type { Admission } from './admission.js';
import { requireIdempotencyKey } from '../services/idempotent.js';
import { rememberValidatedIds } from './access-log.js';
import { bodyTextOf, type BodyRouteConfig } from './json-body.js';

type Access = { scope: Scope } | { node: true } | { public: true } | { authenticated: true };

export interface RouteContext<B, Q, P> {
  req: FastifyRequest;
  reply: FastifyReply;
  body: B;
  query: Q;
  params: P;
  principal: Principal | null;
  /** The key principal when the route demanded a scope. */
  tenantId: string;
  actor: string;
  /** Set when the route requires an Idempotency-Key; checked before the body, as the gates demand. */
  idempotencyKey: string;
  /**
   * The JSON text `body` was parsed from, when `certainBody` accepted it (`body` is then the parsed text itself,
   * not the schema's copy); undefined otherwise.
   */
  certainBodyText: string | undefined;
}

export interface RouteResult<T> {
  data: T;
  notice?: string | null;
  status?: number;
}

export interface RouteSpec<B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType, T> {
  method: 'GET' | 'POST';
  url: string;
  summary: string;
  access: Access;
  body?: B;
  query?: Q;
  params?: P;
  /** The answer to a path id that cannot exist (malformed, too long). @defaultValue 'not_found' */
  notFound?: ErrorCode;
  /** Header documented in OpenAPI; the handler validates it (its codes are specific). */
  idempotencyKey?: boolean;
  /** Admits the request before it authenticates (a refusal is `rate_limited`, which every route may answer). */
  admission?: Admission;
  /** How many units of `admission` the request takes, from its parsed but not yet validated body. @defaultValue 1 */
  admissionUnits?: (rawBody: unknown) => number;
  /**
   * A hand-written check of the body's common shape for a hot route: answers the body when the schema would
   * certainly accept it unchanged, else undefined, and the schema decides (its refusals stay the route's).
   */
  certainBody?: (raw: unknown) => z.output<B> | undefined;
  handler: (ctx: RouteContext<z.output<B>, z.output<Q>, z.output<P>>) => Promise<RouteResult<T>>;
}

/** Every registered route, for the OpenAPI document: the schemas that validate are the ones documented. */
export interface RegisteredRoute {
  method: string;
  url: string;
  summary: string;
  access: Access;
  body?: z.ZodType;
  query?: z.ZodType;
  params?: z.ZodType;
  /** The code a path id that cannot exist answers with. */
  notFound?: ErrorCode;
  idempotencyKey?: boolean;
}

/**
 * Declares one route: authenticate, check access, validate params/query/body with zod, run the handler and
 * answer with the JSON envelope. Refusals are thrown as ItoError and shaped by the app's error handler.
 */
export function defineRoute<B extends z.ZodType = z.ZodUndefined, Q extends z.ZodType = z.ZodUndefined, P extends z.ZodType = z.ZodUndefined, T = unknown>(
  app: FastifyInstance,
  res: Resources,
  registry: RegisteredRoute[],
  spec: RouteSpec<B, Q, P, T>,
): void {
  registry.push({
    method: spec.method,
    url: `/v1${spec.url}`,
    summary: spec.summary,
    access: spec.access,
    ...(spec.body ? { body: spec.body } : {}),
    ...(spec.query ? { query: spec.query } : {}),
    ...(spec.params ? { params: spec.params } : {}),
    ...(spec.notFound ? { notFound: spec.notFound } : {}),
    ...(spec.idempotencyKey ? { idempotencyKey: true } : {}),
  });
  const config: BodyRouteConfig = spec.body ? { bodyVocabulary: vocabularyOf(spec.body), ...(spec.certainBody ? { keepsBodyText: true } : {}) } : {};
  app.route({
    method: spec.method,
    url: `/v1${spec.url}`,
    config,
    // Before the body is read: a saturated admission sheds the request without parsing it.
    ...(spec.admission?.refuseIfSaturated ? { onRequest: onRequestOf(spec.admission.refuseIfSaturated) } : {}),
    handler: (req, reply) => (spec.admission ? spec.admission(() => answer(req, reply), spec.admissionUnits?.(req.body) ?? 1) : answer(req, reply)),
  });

  async function answer(req: FastifyRequest, reply: FastifyReply) {
    let principal: Principal | null = null;
    let tenantId = '';
    let actor = 'anonymous';
    if (!('public' in spec.access)) {
      principal = await authenticateWithinBudget(res, req);
      if ('scope' in spec.access) {
        const key = requireScope(principal, spec.access.scope);
        tenantId = key.tenantId;
        actor = key.keyId;
      } else if ('node' in spec.access) {
        const node = requireNode(principal);
        tenantId = node.tenantId;
        actor = node.nodeId;
      } else {
        if (!principal) throw new ItoError('unauthenticated', 'a bearer credential is required');
        if (principal.kind !== 'key') throw new ItoError('forbidden', 'node credentials may only call /v1/agent routes');
        tenantId = principal.tenantId;
        actor = principal.keyId;
      }
    }
    const idempotencyKey = spec.idempotencyKey ? requireIdempotencyKey(req.headers['idempotency-key']) : '';
    const params = spec.params ? validatePath(spec.params, req.params, spec.notFound ?? 'not_found') : undefined;
    if (params) rememberValidatedIds(req, loggableIds(params as Record<string, string>));
    const query = spec.query ? validate(spec.query, refuseNul(req.query, 'query'), 'query') : undefined;
    const certain = spec.certainBody?.(req.body);
    const body = spec.body ? (certain ?? validate(spec.body, req.body ?? {}, 'body')) : undefined;
    const certainBodyText = certain !== undefined ? bodyTextOf(certain) : undefined;
    const out = await spec.handler({ req, reply, body, query, params, principal, tenantId, actor, idempotencyKey, certainBodyText } as RouteContext<z.output<B>, z.output<Q>, z.output<P>>);
    reply.code(out.status ?? 200);
    return ok(out.data, { notice: out.notice ?? null });
  }
}

/**
 * Authenticates, within the caller's address's budget of failures: once an address has failed too often in
 * the window, its requests are refused before any lookup until the window ends.
 */
async function authenticateWithinBudget(res: Resources, req: FastifyRequest): Promise<Principal | null> {
  const wait = res.authFailures.retryAfterSeconds(req.ip);
  if (wait > 0) {
    throw new ItoError('rate_limited', `too many failed authentications from this address; retry in ${wait} s`, { retry_after_s: wait });
  }
  try {
    const principal = await authenticate(res.pool, req.headers.authorization, res.nodeCredentials);
    if (!principal) res.authFailures.record(req.ip);
    return principal;
  } catch (err) {
    if (err instanceof ItoError && (err.code === 'unauthenticated' || err.code === 'credential_revoked')) res.authFailures.record(req.ip);
    throw err;
  }
}

/** Ids as the access log may keep them: only ones shaped as the API mints them (a pasted token is not). */
function loggableIds(params: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, looksLikeId(v) ? v : '<not an id>']));
}

/** Path ids are opaque to callers: one that fails its shape cannot exist, and is simply not found. */
function validatePath<P extends z.ZodType>(schema: P, value: unknown, notFound: ErrorCode): z.output<P> {
  const result = schema.safeParse(value);
  if (!result.success) throw new ItoError(notFound, 'not found');
  return result.data;
}

/** Query strings decode `%00` to U+0000, which PostgreSQL cannot hold: refused before any schema or query. */
function refuseNul(query: unknown, what: string): unknown {
  for (const v of Object.values((query ?? {}) as Record<string, unknown>)) {
    if ((Array.isArray(v) ? v : [v]).some((x) => typeof x === 'string' && x.includes('\0'))) {
      throw new ItoError('validation_failed', `${what}: a value holds U+0000, which is not accepted`);
    }
  }
  return query;
}

/** Path ids: validated as id tokens before anything reads them; the lookups then check the exact id shape. */
export const idParams = z.object({ id: idToken });
export const refParams = z.object({ ref: idToken });

/** A synchronous check as an onRequest hook: what it throws goes to the app's error handler like a handler's refusal. */
function onRequestOf(check: () => void) {
  return async (): Promise<void> => {
    check();
  };
}
