import { combineHashes } from './hashing.js';

const SHINGLE_SEED = 0x5348;

/**
 * The set of a document's shingles (runs of `size` consecutive word tokens) as sorted, distinct 32-bit hashes. A
 * document shorter than one shingle is one shingle of all its tokens; one with no token has none.
 */
export function shingleSet(tokenHashes: Uint32Array, size: number): Uint32Array {
  const n = tokenHashes.length;
  if (n === 0) return new Uint32Array(0);
  const width = Math.min(size, n);
  const raw = new Uint32Array(n - width + 1);
  for (let i = 0; i < raw.length; i++) raw[i] = combineHashes(tokenHashes, i, width, SHINGLE_SEED);
  raw.sort();
  let w = 0;
  for (let i = 0; i < raw.length; i++) if (i === 0 || raw[i] !== raw[w - 1]) raw[w++] = raw[i]!;
  return raw.slice(0, w);
}

/** Exact Jaccard similarity of two sorted, distinct sets: |A ∩ B| / |A ∪ B|. */
export function jaccard(a: Uint32Array, b: Uint32Array): number {
  if (a.length === 0 && b.length === 0) return 1;
  let i = 0;
  let j = 0;
  let common = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x === y) {
      common++;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return common / (a.length + b.length - common);
}
