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

export async function createTokenHasher(seed = 0): Promise<TokenHasher> {
  const { h32 } = await xxhash();
  return { hash: (token) => h32(token, seed) };
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

/** splitmix32: a small seeded generator for the MinHash permutations, so a seed names the same ones everywhere. */
export function splitmix32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    return mix32(state);
  };
}
