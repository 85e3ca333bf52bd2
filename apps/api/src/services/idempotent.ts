import { ItoError } from '@ito/contracts';
import { canonicalJson, sha256Hex, type LedgerTx } from '@ito/ledger';
import { recordFailedConfirmationUse } from '@ito/runs';
import type { Resources } from '../resources.js';
import { ConfirmationRefusal } from './use-confirmation.js';

/** Idempotency keys: 1–255 printable ASCII characters (docs/contract.md, "Error codes"). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export function requireIdempotencyKey(header: string | string[] | undefined): string {
  if (header === undefined || header === '') throw new ItoError('idempotency_key_required', 'the Idempotency-Key header is required for this call');
  if (Array.isArray(header) || !IDEMPOTENCY_KEY_PATTERN.test(header)) {
    throw new ItoError('idempotency_key_invalid', 'the Idempotency-Key must be 1 to 255 printable characters with no spaces');
  }
  return header;
}

export function fingerprintOf(request: unknown): string {
  return sha256Hex(canonicalJson(request));
}

export interface IdempotentOutcome<T> {
  result: T;
  replayed: boolean;
}

/**
 * Runs a mutation once per (tenant, key): the key is claimed, the work done, and the answer recorded in ONE
 * transaction with the events it produced. A refusal rolls everything back, key included, so nothing is left
 * behind and the caller may retry with the same key once the cause is fixed.
 */
export async function idempotent<T>(
  res: Resources,
  tenantId: string,
  key: string,
  fingerprint: string,
  work: (tx: LedgerTx) => Promise<T>,
): Promise<IdempotentOutcome<T>> {
  try {
    // The key's lock and row ride with BEGIN, its record with COMMIT: same rules, three round trips fewer.
    const outcome = await res.ledger.idempotentTransaction({ tenantId, key, fingerprint }, work);
    switch (outcome.kind) {
      case 'done':
        return { result: outcome.result, replayed: false };
      case 'replay':
        return { result: outcome.result as T, replayed: true };
      case 'mismatch':
        throw new ItoError('idempotency_key_reused', 'this Idempotency-Key was already used for a different request; nothing was done');
      case 'in_progress':
        throw new ItoError('idempotency_in_progress', 'a request with this Idempotency-Key is still being processed; retry shortly');
      default: {
        const unknown: never = outcome;
        throw new Error(`unhandled idempotency outcome ${JSON.stringify(unknown)}`);
      }
    }
  } catch (err) {
    if (err instanceof ConfirmationRefusal) await recordFailedConfirmationUse(res.pool, err.tenantId, err.ref);
    throw err;
  }
}
