import { randomBytes } from 'node:crypto';
import { FINGERPRINT_CHARS, fingerprintOf, fingerprintOfString } from './fingerprint.js';

/**
 * The key exact dedup compares: the normalised text's fingerprint (./fingerprint.ts: HighwayHash-128 of its UTF-8
 * under a key drawn per thread), as a 16-character `binary` (Latin-1) string, one character a byte. The string is
 * read into the table's words and dropped, so it dies young. Digests compare only with digests taken on the same
 * thread.
 */
export function exactDigest(normalized: string): string {
  return fingerprintOfString(normalized);
}

/** {@link exactDigest} of a text given as its UTF-8 bytes, `[start, end)` of them. */
export function digestOf(utf8: Uint8Array, start = 0, end = utf8.length): string {
  return fingerprintOf(utf8, start, end);
}

const DIGEST_CHARS = FINGERPRINT_CHARS;
const WORDS = DIGEST_CHARS / 4;
const EMPTY = -1;

/**
 * Exact duplicates by content hash. Memory is bounded by the number of distinct documents, not their bytes: an
 * open-addressing table of whole digests (16 bytes) and first ordinals (8), at most half full, so 48 to 96
 * bytes a distinct document (50 MB at a million). A `Map` of digest strings cost about as much memory and its
 * kept strings most of the exact pass's garbage-collection time.
 *
 * A slot is chosen from the digest's first two words mixed with a key drawn per table. The exact pass's digests
 * are keyed already, so nobody can search for documents whose digests share their low bits; the table's own key
 * keeps its spread from resting on what a caller passes it.
 */
export class ExactDeduper {
  private capacity = 1 << 12;
  private words = new Int32Array(this.capacity * WORDS);
  private ordinals = new Float64Array(this.capacity).fill(EMPTY);
  private size = 0;
  private readonly digest = new Int32Array(WORDS);
  private readonly key0: number;
  private readonly key1: number;

  constructor() {
    const key = randomBytes(8);
    this.key0 = key.readInt32LE(0);
    this.key1 = key.readInt32LE(4) | 1;
  }

  /** The ordinal of the earlier document with the same normalised text, or null when this one is the first. */
  consider(ordinal: number, normalized: string): number | null {
    return this.considerDigest(ordinal, exactDigest(normalized));
  }

  /** {@link consider} with the digest already taken by {@link exactDigest} or {@link digestOf}. */
  considerDigest(ordinal: number, digest: string): number | null {
    if (digest.length !== DIGEST_CHARS) throw new RangeError('an exact digest is 16 Latin-1 characters');
    if (!(ordinal >= 0)) throw new RangeError('an ordinal is not negative');
    const d = this.digest;
    for (let w = 0, c = 0; w < WORDS; w++, c += 4) {
      d[w] = digest.charCodeAt(c) | (digest.charCodeAt(c + 1) << 8) | (digest.charCodeAt(c + 2) << 16) | (digest.charCodeAt(c + 3) << 24);
    }
    let slot = this.slotOf(d[0]!, d[1]!);
    for (let first = this.ordinals[slot]!; first !== EMPTY; first = this.ordinals[slot]!) {
      if (this.holds(slot, d)) return first;
      slot = (slot + 1) & (this.capacity - 1);
    }
    this.words.set(d, slot * WORDS);
    this.ordinals[slot] = ordinal;
    if (++this.size * 2 > this.capacity) this.grow();
    return null;
  }

  get distinct(): number {
    return this.size;
  }

  private slotOf(w0: number, w1: number): number {
    return ((Math.imul(w0 ^ this.key0, this.key1) ^ Math.imul(w1 ^ this.key1, 0x9e3779b1)) >>> 0) & (this.capacity - 1);
  }

  private holds(slot: number, d: Int32Array): boolean {
    const words = this.words;
    const base = slot * WORDS;
    for (let w = 0; w < WORDS; w++) if (words[base + w] !== d[w]) return false;
    return true;
  }

  private grow(): void {
    const words = this.words;
    const ordinals = this.ordinals;
    this.capacity *= 2;
    this.words = new Int32Array(this.capacity * WORDS);
    this.ordinals = new Float64Array(this.capacity).fill(EMPTY);
    for (let from = 0; from < ordinals.length; from++) {
      if (ordinals[from] === EMPTY) continue;
      const base = from * WORDS;
      let slot = this.slotOf(words[base]!, words[base + 1]!);
      while (this.ordinals[slot] !== EMPTY) slot = (slot + 1) & (this.capacity - 1);
      for (let w = 0; w < WORDS; w++) this.words[slot * WORDS + w] = words[base + w]!;
      this.ordinals[slot] = ordinals[from]!;
    }
  }
}
