/** Donor bins tried per empty bin before the nearest filled bin to the right is taken (see {@link sign}). */
const MAX_DONOR_TRIES = 64;

/**
 * One-permutation MinHash with optimal densification (Shrivastava, "Optimal Densification for Fast and Accurate
 * Minwise Hashing", ICML 2017): each shingle is hashed once; the hash's top 16 bits pick one of k bins, and each
 * bin keeps the smallest hash (as a signed 32-bit integer: any fixed order will do) that fell in it. A bin nothing
 * fell in takes the value of a donor bin picked by a hash of (bin, attempt) until a filled one comes up, so two
 * sets with the same empty bins pick the same donors, and each signature position agrees with probability the
 * Jaccard of the two sets, as with k independent permutations. Cost: one hash per shingle plus about k·(k − f)/f
 * donor hashes for f filled bins, against k multiply-and-compare per shingle for k permutations.
 *
 * A set with few shingles for its bins leaves many bins empty; after {@link MAX_DONOR_TRIES} tries a bin takes
 * the nearest filled bin to its right instead (the same for every set with those empty bins, so the choice stays
 * consistent between sets), so a very sparse set costs at most 64 donor hashes a bin and one pass over the bins.
 * Bins: 1 to 65,536.
 */
export class OnePermutationMinHash {
  private readonly filled: Uint8Array;
  private readonly values: Int32Array;
  private right: Int32Array | null = null;
  /** The signature: the values read as unsigned, one view of the same memory, rewritten by each {@link sign}. */
  readonly signature: Uint32Array;

  constructor(
    readonly bins: number,
    private readonly seed: number,
  ) {
    if (!Number.isInteger(bins) || bins < 1 || bins > 65536) throw new RangeError('bins must be an integer from 1 to 65536');
    this.filled = new Uint8Array(bins);
    this.values = new Int32Array(bins);
    this.signature = new Uint32Array(this.values.buffer);
  }

  /** The k-value signature of a non-empty set of 32-bit shingle hashes, in {@link signature}. */
  sign(shingles: Uint32Array): Uint32Array {
    const { bins, seed, filled, values } = this;
    filled.fill(0);
    let count = 0;
    for (let s = 0; s < shingles.length; s++) {
      const h = mix(shingles[s]! ^ seed);
      const bin = ((h >>> 16) * bins) >>> 16;
      if (filled[bin] === 0) {
        filled[bin] = 1;
        count++;
        values[bin] = h;
      } else if (h < values[bin]!) values[bin] = h;
    }
    if (count < bins && count > 0) this.densify();
    return this.signature;
  }

  /** Every empty bin takes a filled bin's value; donors are bins filled by shingles, never densified ones. */
  private densify(): void {
    const { bins, seed, filled, values } = this;
    let right: Int32Array | null = null;
    for (let bin = 0; bin < bins; bin++) {
      if (filled[bin] === 1) continue;
      let donor = -1;
      for (let attempt = 0; attempt < MAX_DONOR_TRIES && donor < 0; attempt++) {
        const j = ((mix(Math.imul(bin + 1, 0x9e3779b1) ^ Math.imul(attempt + 1, 0x85ebca6b) ^ seed) >>> 16) * bins) >>> 16;
        if (filled[j] === 1) donor = j;
      }
      if (donor < 0) donor = (right ??= this.nearestFilledToTheRight())[bin]!;
      values[bin] = values[donor]!;
    }
  }

  /** For each bin, the first bin after it (wrapping round) that shingles filled: one pass back, then the wrap. */
  private nearestFilledToTheRight(): Int32Array {
    const { bins, filled } = this;
    const right = (this.right ??= new Int32Array(bins));
    let next = -1;
    for (let pass = 0; pass < 2; pass++) {
      for (let i = bins - 1; i >= 0; i--) {
        right[i] = next;
        if (filled[i] === 1) next = i;
      }
    }
    return right;
  }
}

/** The murmur3 finaliser, kept signed (no boxing of values past 2³¹). */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
