import { hash } from 'node:crypto';

/**
 * The key exact dedup compares: the SHA-256 of the normalised text, as base64url. One-shot hash, no Hash object
 * per document; a string key measured as fast as a binary one (a Buffer digest costs an allocation that outweighs
 * a shorter key), and the Map lookup is a small part of the hash.
 */
export function exactDigest(normalized: string): string {
  return hash('sha256', normalized, 'base64url');
}

/**
 * Exact duplicates by content hash. Memory is bounded by the number of distinct documents, not their bytes: one
 * fixed-size digest (SHA-256, kept as 43 base64url characters) and the first ordinal per distinct document.
 */
export class ExactDeduper {
  private readonly firstByDigest = new Map<string, number>();

  /** The ordinal of the earlier document with the same normalised text, or null when this one is the first. */
  consider(ordinal: number, normalized: string): number | null {
    return this.considerDigest(ordinal, exactDigest(normalized));
  }

  /** {@link consider} with the digest already taken by {@link exactDigest} (on another thread, say). */
  considerDigest(ordinal: number, digest: string): number | null {
    const first = this.firstByDigest.get(digest);
    if (first !== undefined) return first;
    this.firstByDigest.set(digest, ordinal);
    return null;
  }

  get distinct(): number {
    return this.firstByDigest.size;
  }
}
