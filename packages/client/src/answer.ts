import { envelopeSchema, fail, type Envelope, type ErrorCode } from '@ito/contracts';
import { TransportError } from './transport-error.js';

/**
 * Turns an HTTP answer into an envelope. The API always answers with one; a body that is not an envelope
 * came from something else (an older server without the route, a proxy) and is mapped by status, so a
 * missing route reads as `not_found` instead of a crash. Anything else unreadable is garbled: the outcome
 * of the call is unknown.
 */
export function toEnvelope(status: number, body: string, route: string, host: string): Envelope<unknown> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  const parsed = envelopeSchema.safeParse(json);
  if (parsed.success) return parsed.data as Envelope<unknown>;

  const byStatus: Record<number, [ErrorCode, string]> = {
    401: ['unauthenticated', 'the server did not accept the credential'],
    403: ['forbidden', 'the credential is not allowed to do this'],
    404: ['not_found', `the server at ${host} does not offer ${route}`],
    429: ['rate_limited', 'the server is limiting requests; try again shortly'],
  };
  const mapped = byStatus[status];
  if (mapped) return fail(mapped[0], mapped[1], { details: { status } });
  if (status >= 500) return fail('internal_error', `the server at ${host} answered ${status} without an envelope`, { details: { status } });
  throw new TransportError('transport_ambiguous', `the answer from ${host} to ${route} was not readable (status ${status})`, true, true, {
    host,
    status,
  });
}

/** A 5xx answer to a mutation leaves the outcome unknown in the same way a dropped connection does. */
export function isServerFailure(status: number): boolean {
  return status >= 500;
}
