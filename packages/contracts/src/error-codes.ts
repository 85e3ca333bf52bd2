/**
 * The stable error codes of the public contract (docs/contract.md, "Error codes").
 * Users and the ECC bridge branch on these strings: never rename one, only add.
 * Each code carries the HTTP status the API answers with and whether a retry of the
 * same request could succeed without anything else changing.
 */
export const ERROR_CODES = {
  unauthenticated: { status: 401, retryable: false },
  credential_revoked: { status: 401, retryable: false },
  forbidden: { status: 403, retryable: false },
  not_found: { status: 404, retryable: false },
  validation_failed: { status: 400, retryable: false },
  rate_limited: { status: 429, retryable: true },
  internal_error: { status: 500, retryable: true },

  booking_not_found: { status: 404, retryable: false },
  booking_expired: { status: 409, retryable: false },
  booking_revoked: { status: 409, retryable: false },
  booking_released: { status: 409, retryable: false },
  booking_incomplete: { status: 409, retryable: false },
  booking_mismatch: { status: 409, retryable: false },
  eligibility_stale: { status: 409, retryable: false },
  booking_not_started: { status: 409, retryable: false },

  manifest_invalid: { status: 422, retryable: false },
  manifest_contains_secret: { status: 422, retryable: false },
  manifest_digest_mismatch: { status: 422, retryable: false },
  manifest_path_not_absolute: { status: 400, retryable: false },
  manifest_symlink: { status: 400, retryable: false },
  manifest_not_regular_file: { status: 400, retryable: false },
  manifest_unsafe_permissions: { status: 400, retryable: false },
  manifest_wrong_owner: { status: 400, retryable: false },
  manifest_too_large: { status: 400, retryable: false },
  manifest_changed_while_reading: { status: 400, retryable: true },

  confirmation_required: { status: 428, retryable: false },
  confirmation_not_found: { status: 404, retryable: false },
  confirmation_pending: { status: 409, retryable: true },
  confirmation_denied: { status: 409, retryable: false },
  confirmation_expired: { status: 409, retryable: false },
  confirmation_consumed: { status: 409, retryable: false },
  confirmation_mismatch: { status: 409, retryable: false },
  confirmation_locked: { status: 423, retryable: false },

  idempotency_key_required: { status: 400, retryable: false },
  idempotency_key_invalid: { status: 400, retryable: false },
  idempotency_key_reused: { status: 422, retryable: false },
  idempotency_in_progress: { status: 409, retryable: true },

  budget_exceeded: { status: 422, retryable: false },
  incremental_cost_exceeded: { status: 422, retryable: false },
  capacity_insufficient: { status: 422, retryable: false },
  fabric_unsupported: { status: 422, retryable: false },
  data_policy_violation: { status: 422, retryable: false },
  checkpoint_storage_invalid: { status: 422, retryable: false },
  data_ref_not_permitted: { status: 422, retryable: false },
  checkpoint_storage_unreachable: { status: 422, retryable: true },
  plan_refused: { status: 422, retryable: false },
  data_ref_too_large: { status: 422, retryable: false },
  eval_battery_not_registered: { status: 422, retryable: false },
  eval_battery_invalid: { status: 422, retryable: false },
  eval_battery_exists: { status: 409, retryable: false },

  invalid_state: { status: 409, retryable: false },
  gate_failed: { status: 409, retryable: false },
  audit_verification_failed: { status: 409, retryable: false },

  timeout: { status: 504, retryable: true },
  transport_ambiguous: { status: 502, retryable: true },
  connect_failed: { status: 503, retryable: true },
} as const satisfies Record<string, { status: number; retryable: boolean }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as ErrorCode[];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}

/** Codes the client raises itself when a manifest file is refused before any request is made. */
export const CLIENT_MANIFEST_CODES = [
  'manifest_path_not_absolute',
  'manifest_symlink',
  'manifest_not_regular_file',
  'manifest_unsafe_permissions',
  'manifest_wrong_owner',
  'manifest_too_large',
  'manifest_changed_while_reading',
] as const satisfies readonly ErrorCode[];

/** CLI exit codes (docs/contract.md, "The JSON envelope"). */
export const EXIT = {
  ok: 0,
  refused: 1,
  usage: 2,
  manifest_rejected: 3,
  transport: 4,
  unauthenticated: 5,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Maps an error code to the CLI's exit code. */
export function exitCodeFor(code: ErrorCode): ExitCode {
  if ((CLIENT_MANIFEST_CODES as readonly string[]).includes(code)) return EXIT.manifest_rejected;
  switch (code) {
    case 'timeout':
    case 'transport_ambiguous':
    case 'connect_failed':
      return EXIT.transport;
    case 'unauthenticated':
    case 'credential_revoked':
      return EXIT.unauthenticated;
    default:
      return EXIT.refused;
  }
}
