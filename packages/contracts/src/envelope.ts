import { z } from 'zod';
import { ERROR_CODES, type ErrorCode, isErrorCode } from './error-codes.js';

/** The error body of a refused call. `message` never carries a secret, a key, a token or a stack. */
export interface EnvelopeError {
  code: ErrorCode;
  message: string;
  retryable: boolean;
  /** Extra machine-readable facts (a JSON path, a limit); never a secret. */
  details?: Record<string, unknown>;
}

export interface OkEnvelope<T> {
  ok: true;
  live_api_contacted: boolean;
  notice: string | null;
  data: T;
}

export interface ErrorEnvelope {
  ok: false;
  live_api_contacted: boolean;
  notice: string | null;
  error: EnvelopeError;
}

export type Envelope<T> = OkEnvelope<T> | ErrorEnvelope;

export function ok<T>(data: T, opts: { notice?: string | null; liveApiContacted?: boolean } = {}): OkEnvelope<T> {
  return { ok: true, live_api_contacted: opts.liveApiContacted ?? true, notice: opts.notice ?? null, data };
}

export function fail(
  code: ErrorCode,
  message: string,
  opts: { notice?: string | null; liveApiContacted?: boolean; details?: Record<string, unknown> } = {},
): ErrorEnvelope {
  const error: EnvelopeError = { code, message, retryable: ERROR_CODES[code].retryable };
  if (opts.details) error.details = opts.details;
  return { ok: false, live_api_contacted: opts.liveApiContacted ?? true, notice: opts.notice ?? null, error };
}

/** A refusal that carries its stable code; thrown by handlers, turned into an envelope at the edge. */
export class ItoError extends Error {
  override readonly name = 'ItoError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  toEnvelope(liveApiContacted = true): ErrorEnvelope {
    return fail(this.code, this.message, { liveApiContacted, ...(this.details ? { details: this.details } : {}) });
  }
}

export const envelopeErrorSchema = z.object({
  code: z.string().refine(isErrorCode, 'unknown error code'),
  message: z.string(),
  retryable: z.boolean(),
  details: z.record(z.string(), z.unknown()).optional(),
});

/** Parses any envelope loosely (data stays unknown); used by clients to check a server's answer. */
export const envelopeSchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), live_api_contacted: z.boolean(), notice: z.string().nullable(), data: z.unknown() }),
  z.object({ ok: z.literal(false), live_api_contacted: z.boolean(), notice: z.string().nullable(), error: envelopeErrorSchema }),
]);
