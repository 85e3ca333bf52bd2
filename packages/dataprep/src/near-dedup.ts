import { combineHashes, smallKey, splitmix32 } from './hashing.js';
import type { DataPrepParams } from './params.js';
import { jaccard } from './shingles.js';

export interface NearDuplicate {
  duplicate_of: number;
  jaccard: number;
}

/**
 * Near duplicates: MinHash signatures over shingle sets, LSH banding for candidates, and the exact Jaccard of the
 * candidate's shingle sets to confirm them, so a banding false positive is never removed. Documents are
 * considered in input order and compared only with documents kept so far: the keeper of a cluster is its
 * earliest document, and a removed document never pulls a third one into its cluster. Memory: each kept
 * document's shingle set (4 bytes a shingle) and one bucket entry per band.
 */
export class NearDeduper {
  private readonly a: Uint32Array;
  private readonly b: Uint32Array;
  private readonly buckets: Array<Map<number, number | number[]>>;
  /** Shingle sets of kept documents, by ordinal. */
  private readonly kept = new Map<number, Uint32Array>();
  private readonly signature: Uint32Array;
  private readonly keys: Uint32Array;
  candidatesVerified = 0;
  falseCandidates = 0;

  constructor(private readonly params: DataPrepParams['near']) {
    const next = splitmix32(params.seed);
    this.a = new Uint32Array(params.permutations);
    this.b = new Uint32Array(params.permutations);
    for (let i = 0; i < params.permutations; i++) {
      this.a[i] = next() | 1; // odd: x ↦ a·x + b (mod 2³²) is then a permutation
      this.b[i] = next();
    }
    this.buckets = Array.from({ length: params.bands }, () => new Map());
    this.signature = new Uint32Array(params.permutations);
    this.keys = new Uint32Array(params.bands);
  }

  /** The kept document this one nearly duplicates; when none, the document is kept and indexed. */
  consider(ordinal: number, shingles: Uint32Array): NearDuplicate | null {
    if (shingles.length === 0) return null;
    this.bandKeysInto(shingles, this.keys);
    return this.considerKeyed(ordinal, shingles, this.keys);
  }

  /**
   * The LSH band keys of a shingle set (its MinHash signature, banded): pure, so a thread other than the one
   * that decides can compute them, and the decision is the same whichever computed them.
   */
  bandKeys(shingles: Uint32Array): Uint32Array {
    const keys = new Uint32Array(this.params.bands);
    if (shingles.length > 0) this.bandKeysInto(shingles, keys);
    return keys;
  }

  /** {@link consider} with the band keys already computed by {@link bandKeys} (of a deduper with the same params). */
  considerKeyed(ordinal: number, shingles: Uint32Array, keys: Uint32Array): NearDuplicate | null {
    if (shingles.length === 0) return null;
    const { bands, jaccard_threshold } = this.params;
    const candidates = new Set<number>();
    for (let band = 0; band < bands; band++) {
      const hit = this.buckets[band]!.get(keys[band]!);
      if (hit === undefined) continue;
      if (typeof hit === 'number') candidates.add(hit);
      else for (const c of hit) candidates.add(c);
    }
    if (candidates.size > 0) {
      for (const other of [...candidates].sort((x, y) => x - y)) {
        this.candidatesVerified++;
        const similarity = jaccard(shingles, this.kept.get(other)!);
        if (similarity >= jaccard_threshold) return { duplicate_of: other, jaccard: similarity };
        this.falseCandidates++;
      }
    }

    this.kept.set(ordinal, shingles);
    for (let band = 0; band < bands; band++) {
      const map = this.buckets[band]!;
      const key = keys[band]!;
      const hit = map.get(key);
      if (hit === undefined) map.set(key, ordinal);
      else if (typeof hit === 'number') map.set(key, [hit, ordinal]);
      else hit.push(ordinal);
    }
    return null;
  }

  private bandKeysInto(shingles: Uint32Array, keys: Uint32Array): void {
    this.sign(shingles);
    const { bands, rows } = this.params;
    for (let band = 0; band < bands; band++) keys[band] = smallKey(combineHashes(this.signature, band * rows, rows, band));
  }

  private sign(shingles: Uint32Array): void {
    const { a, b, signature } = this;
    signature.fill(0xffffffff);
    for (let p = 0; p < a.length; p++) {
      const ap = a[p]!;
      const bp = b[p]!;
      let min = 0xffffffff;
      for (let s = 0; s < shingles.length; s++) {
        const v = (Math.imul(ap, shingles[s]!) + bp) >>> 0;
        if (v < min) min = v;
      }
      signature[p] = min;
    }
  }
}
