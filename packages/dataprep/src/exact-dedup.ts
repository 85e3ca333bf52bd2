import { hash } from 'node:crypto';

/**
 * Exact duplicates by content hash. Memory is bounded by the number of distinct documents, not their bytes: one
 * fixed-size digest (SHA-256, kept as 43 base64url characters) and the first ordinal per distinct document.
 */
export class ExactDeduper {
  private readonly firstByDigest = new Map<string, number>();

  /** The ordinal of the earlier document with the same normalised text, or null when this one is the first. */
  consider(ordinal: number, normalized: string): number | null {
    // One-shot hash: no Hash object per document. A base64url string key measured as fast as binary keys (a
    // Buffer digest costs an allocation that outweighs a shorter key), and a Map lookup is a small part of it.
    const digest = hash('sha256', normalized, 'base64url');
    const first = this.firstByDigest.get(digest);
    if (first !== undefined) return first;
    this.firstByDigest.set(digest, ordinal);
    return null;
  }

  get distinct(): number {
    return this.firstByDigest.size;
  }
}
