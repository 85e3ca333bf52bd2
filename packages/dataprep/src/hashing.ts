import xxhash from 'xxhash-wasm';

/**
 * 32-bit hashes of word tokens, from which shingle and n-gram hashes are combined. xxHash32 (WebAssembly, no
 * native build) hashes a short token about 28× faster than a node:crypto digest (test/bench/README.md, "Data
 * prep"); it is not a cryptographic hash and need not be: a collision only makes two shingles one, and every
 * n-gram hit is confirmed on the tokens themselves.
 */
export interface TokenHasher {
  hash(token: string): number;
}

/** Distinct tokens whose hashes are remembered; past it, tokens are hashed every time (memory stays bounded). */
export const TOKEN_CACHE_SIZE = 1 << 20;

/**
 * Word frequencies are Zipfian, so most tokens of a corpus repeat: a bounded cache of their hashes saves most calls
 * into WebAssembly (each of which copies the string in).
 */
export async function createTokenHasher(seed = 0, cacheSize = TOKEN_CACHE_SIZE): Promise<TokenHasher> {
  const { h32 } = await xxhash();
  const cache = new Map<string, number>();
  return {
    hash: (token) => {
      let h = cache.get(token);
      if (h === undefined) {
        h = h32(token, seed);
        if (cache.size < cacheSize) cache.set(token, h);
      }
      return h;
    },
  };
}

/** Hash-table keys below 2³⁰ stay small integers in V8 (no boxed heap numbers); a lost bit only adds candidates. */
export function smallKey(h: number): number {
  return h & 0x3fffffff;
}

const ROLL_BASE = 0x01000193;

/**
 * One hash per window of `n` consecutive token hashes, by a polynomial rolling hash (mod 2³²), so a window costs
 * O(1) whatever n is; each is finalised with {@link mix32} and the seed.
 */
export function windowHashes(hashes: Uint32Array, n: number, seed: number): Uint32Array {
  const count = hashes.length - n + 1;
  if (count <= 0) return new Uint32Array(0);
  const out = new Uint32Array(count);
  let top = 1; // ROLL_BASE^(n-1)
  for (let k = 1; k < n; k++) top = Math.imul(top, ROLL_BASE);
  let h = 0;
  for (let k = 0; k < n; k++) h = (Math.imul(h, ROLL_BASE) + hashes[k]!) | 0;
  out[0] = mix32(h ^ seed);
  for (let i = 1; i < count; i++) {
    h = (Math.imul(h - Math.imul(hashes[i - 1]!, top), ROLL_BASE) + hashes[i + n - 1]!) | 0;
    out[i] = mix32(h ^ seed);
  }
  return out;
}

/** The murmur3 finaliser: a bijection on 32-bit integers that spreads every input bit over the output. */
export function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** One hash of `count` consecutive token hashes starting at `from`, order-sensitive. */
export function combineHashes(hashes: Uint32Array, from: number, count: number, seed: number): number {
  let h = seed >>> 0;
  for (let i = from; i < from + count; i++) h = Math.imul(h ^ hashes[i]!, 0x9e3779b1) + 0x7f4a7c15;
  return mix32(h);
}

export function hashTokens(tokens: readonly string[], hasher: TokenHasher): Uint32Array {
  const out = new Uint32Array(tokens.length);
  for (let i = 0; i < tokens.length; i++) out[i] = hasher.hash(tokens[i]!);
  return out;
}

/** splitmix32: a small seeded generator (the MinHash's hash seed), so a seed names the same hashes everywhere. */
export function splitmix32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    return mix32(state);
  };
}
