import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/** The ids a route validated, kept on the request for its access log line. */
const validatedIds = new WeakMap<FastifyRequest, Record<string, string>>();

export function rememberValidatedIds(req: FastifyRequest, ids: Record<string, string>): void {
  validatedIds.set(req, ids);
}

/**
 * Fastify's own request logging writes `req.url`, which can carry anything a caller put in a path or a query
 * (a token pasted into a URL included). This controller logs one line per answered request instead: method,
 * route pattern, the ids the route validated, status and time. Unmatched requests log no path at all.
 */
export class AccessLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      method: request.method,
      route: request.routeOptions?.url ?? null,
      ids: validatedIds.get(request) ?? {},
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (error) reply.log.error({ ...line, err: { type: error.name } }, 'request errored');
    else reply.log.info(line, 'request completed');
  }

  override defaultErrorLog(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    reply.log.error({ route: request.routeOptions?.url ?? null, err: { type: error.name } }, 'request failed');
  }

  override routeNotFound(): void {}

  override writeHeadError(error: Error, _request: FastifyRequest, reply: FastifyReply): void {
    reply.log.warn({ err: { type: error.name } }, 'could not write the response head');
  }
}
