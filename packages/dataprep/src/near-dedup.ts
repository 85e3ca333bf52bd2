import { BandTable } from './band-table.js';
import { combineHashes, splitmix32 } from './hashing.js';
import { KeptTokens } from './kept-tokens.js';
import { OnePermutationMinHash } from './minhash.js';
import type { DataPrepParams } from './params.js';
import { jaccard, shingleSet } from './shingles.js';

export interface NearDuplicate {
  duplicate_of: number;
  jaccard: number;
}

/**
 * Near duplicates: MinHash signatures over shingle sets (one permutation, densified: ./minhash.ts), LSH banding
 * for candidates, and the exact Jaccard of the candidate's shingle sets to confirm them, so a banding false
 * positive is never removed. Documents are considered in input order and compared only with documents kept so
 * far: the keeper of a cluster is its earliest document, and a removed document never pulls a third one into its
 * cluster. Memory, per kept document: its token hashes (about 2 bytes a token, in {@link KeptTokens}, from which
 * its shingle set is made again when it is a candidate) and one slot per band (a {@link BandTable}, 10–12.5
 * bytes), no object of its own.
 */
export class NearDeduper {
  private readonly minhash: OnePermutationMinHash;
  private readonly buckets: BandTable[];
  /** Token hashes of kept documents, by kept id (the order they were kept in, so ids follow ordinals). */
  private readonly kept = new KeptTokens();
  /** Kept ids met in the bands of the document being considered. */
  private candidates: number[] = [];
  private readonly collect = (id: number) => {
    if (!this.candidates.includes(id)) this.candidates.push(id);
  };
  private readonly keys: Uint32Array;
  candidatesVerified = 0;
  falseCandidates = 0;

  constructor(private readonly params: DataPrepParams['near']) {
    this.minhash = new OnePermutationMinHash(params.permutations, splitmix32(params.seed)());
    // Initial capacities spread over one growth step (×1.25), so the bands' tables do not all grow at one document.
    this.buckets = Array.from({ length: params.bands }, (_, band) => new BandTable(1024 * 1.25 ** (band / params.bands)));
    this.keys = new Uint32Array(params.bands);
  }

  /**
   * The kept document this one (its word tokens' hashes) nearly duplicates; when none, the document is kept and
   * indexed. A document with no token has no shingle: it is never indexed nor matched.
   */
  consider(ordinal: number, tokens: Uint32Array): NearDuplicate | null {
    const shingles = shingleSet(tokens, this.params.shingle_words);
    if (shingles.length === 0) return null;
    this.bandKeysInto(shingles, this.keys);
    return this.considerKeyed(ordinal, tokens, shingles, this.keys);
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

  /**
   * {@link consider} with the shingle set (`shingleSet(tokens, shingle_words)`) and its band keys already computed
   * by {@link bandKeys} (of a deduper with the same params).
   */
  considerKeyed(ordinal: number, tokens: Uint32Array, shingles: Uint32Array, keys: Uint32Array): NearDuplicate | null {
    if (shingles.length === 0) return null;
    const { bands, jaccard_threshold, shingle_words } = this.params;
    this.candidates = [];
    for (let band = 0; band < bands; band++) this.buckets[band]!.forEach(keys[band]!, this.collect);
    // Kept ids follow ordinals: verified in input order, the earliest near duplicate is the one named.
    for (const id of this.candidates.sort((x, y) => x - y)) {
      this.candidatesVerified++;
      const similarity = jaccard(shingles, this.kept.shingles(id, shingle_words));
      if (similarity >= jaccard_threshold) return { duplicate_of: this.kept.ordinalOf(id), jaccard: similarity };
      this.falseCandidates++;
    }

    const id = this.kept.add(tokens, ordinal);
    for (let band = 0; band < bands; band++) this.buckets[band]!.add(keys[band]!, id);
    return null;
  }

  private bandKeysInto(shingles: Uint32Array, keys: Uint32Array): void {
    const signature = this.minhash.sign(shingles);
    const { bands, rows } = this.params;
    for (let band = 0; band < bands; band++) keys[band] = combineHashes(signature, band * rows, rows, band);
  }
}
