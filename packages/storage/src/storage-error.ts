import { ItoError, type ErrorCode } from '@ito/contracts';

export type StorageFailure = 'invalid_uri' | 'unsupported_scheme' | 'outside_root' | 'not_found' | 'not_an_object' | 'too_many_objects' | 'io_failed' | 'unreachable';

/**
 * A storage operation refused or failed. Messages say what is wrong with a URI, never the URI itself: URIs come
 * from manifests and trainers, and a log line is no place to echo them.
 */
export class StorageError extends ItoError {
  constructor(
    readonly reason: StorageFailure,
    message: string,
  ) {
    super(codeFor(reason), message, { reason });
  }
}

function codeFor(reason: StorageFailure): ErrorCode {
  if (reason === 'not_found') return 'not_found';
  if (reason === 'unreachable') return 'checkpoint_storage_unreachable';
  return reason === 'io_failed' ? 'internal_error' : 'checkpoint_storage_invalid';
}

export function isStorageError(err: unknown, reason?: StorageFailure): err is StorageError {
  return err instanceof StorageError && (reason === undefined || err.reason === reason);
}
