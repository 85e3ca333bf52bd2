import type { ExpectedVersion } from './types.js';

/**
 * The stream was not at the expected version (or another writer got there first). Nothing was written:
 * the append is one statement, so it either inserts every event or none.
 */
export class VersionConflictError extends Error {
  override readonly name = 'VersionConflictError';
  readonly code = 'version_conflict' as const;

  constructor(
    readonly streamId: string,
    readonly expected: ExpectedVersion,
    readonly actual: number | null = null,
  ) {
    super(`stream ${streamId} is not at the expected version ${String(expected)}${actual === null ? '' : ` (it is at ${actual})`}`);
  }
}
