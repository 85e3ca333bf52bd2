import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ItoError, fail, type ErrorCode } from '@ito/contracts';

/**
 * Every answer is the envelope with a stable code, the framework's own answers included: a refused body,
 * an unknown route, a path id too long for the router, a malformed URL, and what Node's HTTP parser refuses
 * before Fastify sees a request (oversized or malformed header lines). No message repeats the URL, a header
 * or the body.
 */

/** Largest request body the API reads; a manifest is at most 1 MiB and travels inside JSON. */
export const BODY_LIMIT_BYTES = 2 * 1024 * 1024;

function send(reply: FastifyReply, status: number, code: ErrorCode, message: string): FastifyReply {
  return reply.code(status).send(fail(code, message));
}

/** A refusal with a wait: its Retry-After header comes from the error's details. */
function retryAfterOf(err: ItoError): number | undefined {
  const seconds = err.details?.retry_after_s;
  return typeof seconds === 'number' ? seconds : undefined;
}

export function handleError(err: FastifyError | ItoError | Error, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (err instanceof ItoError) {
    if (err.status >= 500) req.log.error({ code: err.code }, err.message);
    const retryAfter = retryAfterOf(err);
    if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
    return reply.code(err.status).send(err.toEnvelope());
  }
  const e = err as FastifyError;
  if (e.statusCode === 429) return send(reply, 429, 'rate_limited', 'too many requests for this credential; retry after the Retry-After seconds');
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || e.statusCode === 413) {
    return send(reply, 413, 'validation_failed', `the request body is larger than ${BODY_LIMIT_BYTES} bytes`);
  }
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || e.statusCode === 415) {
    return send(reply, 415, 'validation_failed', 'request bodies must be application/json');
  }
  if (e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500) {
    return send(reply, 400, 'validation_failed', 'the request is not valid: its body, length or encoding was refused');
  }
  // Only the error's kind and stack go to the log: a database error's message can quote the values it saw.
  req.log.error({ err: { type: e.name, code: e.code, stack: e.stack?.split('\n').slice(1).join('\n') } }, 'unhandled error');
  return send(reply, 500, 'internal_error', `internal error; quote request id ${req.id}`);
}

export function handleNotFound(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return send(reply, 404, 'not_found', 'no such route; see /v1/openapi.json for the routes this API serves');
}

/** Errors the router raises before any route runs. */
export function handleFrameworkError(err: FastifyError, _req: FastifyRequest, reply: FastifyReply): FastifyReply {
  switch (err.code) {
    case 'FST_ERR_MAX_PARAM_LENGTH':
      // No id is that long: whatever it names does not exist.
      return send(reply, 404, 'not_found', 'not found');
    case 'FST_ERR_BAD_URL':
      return send(reply, 400, 'validation_failed', 'the request path is not valid percent-encoded UTF-8');
    default:
      return send(reply, 500, 'internal_error', 'internal error while routing the request');
  }
}

/**
 * What Node's HTTP parser refuses (header lines too large, malformed requests) never reaches Fastify; the
 * answer is written on the socket, still as the envelope.
 */
export function handleClientError(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  let status = 400;
  const code: ErrorCode = 'validation_failed';
  let message = 'the request could not be parsed as HTTP/1.1';
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    message = 'the request headers are too large';
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    message = 'the request was not received in time';
  }
  this.log.debug({ code: err.code }, 'refused at the HTTP parser');
  if (socket.writable) {
    const body = JSON.stringify(fail(code, message));
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
