/**
 * How much one data ref may make a worker read. A manifest declares each source's tokens; a document holds at
 * least one token, and text takes a few bytes per token (about 4 for English, more for escaped JSON, other
 * scripts and per-document metadata), so a source far larger than that is not the source the approver saw. The
 * operator's limit bounds it whatever is declared: a ref past either is refused as soon as that is known.
 */
export const MAX_BYTES_PER_DECLARED_TOKEN = 64;

/** The operator limit when none is set: 64 GiB per ref. */
export const DEFAULT_MAX_BYTES_PER_REF = 64 * 1024 ** 3;

export interface DataRefBounds {
  /** Bytes of the ref's files, all shards together. */
  maxBytes: number;
  /** Documents (non-blank lines) of the ref, all shards together. */
  maxDocuments: number;
}

export function dataRefBounds(declaredTokens: number, operatorMaxBytes: number): DataRefBounds {
  return { maxBytes: Math.min(operatorMaxBytes, declaredTokens * MAX_BYTES_PER_DECLARED_TOKEN), maxDocuments: declaredTokens };
}

/** A ref past its bounds: the stable code `data_ref_too_large`. The message names the bound, never the file's size. */
export class DataRefTooLargeError extends Error {
  override readonly name = 'DataRefTooLargeError';
  readonly code = 'data_ref_too_large';
}

/**
 * Counts what is read against a bound, so a file that grows while read, or reports a smaller size than it holds,
 * is refused at the chunk that passes the bound rather than after it was read whole.
 */
export class ReadBudget {
  private used = 0;
  constructor(
    private readonly limit: number,
    private readonly what: string,
  ) {}

  take(n: number): void {
    this.used += n;
    if (this.used > this.limit) throw new DataRefTooLargeError(`holds more than ${this.limit} ${this.what}`);
  }

  /** Refuses at once when a size known before reading (a file's stat) would pass the bound. */
  wouldFit(n: number): void {
    if (this.used + n > this.limit) throw new DataRefTooLargeError(`holds more than ${this.limit} ${this.what}`);
  }
}
