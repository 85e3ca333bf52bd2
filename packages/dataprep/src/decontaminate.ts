import type { Battery } from './battery.js';
import { hashTokens, smallKey, windowHashes, type TokenHasher } from './hashing.js';
import { normalizeText, wordTokens } from './normalize.js';

const GRAM_SEED = 0x6e67;

interface GramSource {
  item: number;
  offset: number;
  length: number;
}

/**
 * Every n-gram (n word tokens) of every battery item, for overlap tests against training documents. An item
 * shorter than n tokens is one gram of all its tokens, so a short item can still be found. The index looks grams
 * up by a 32-bit hash and confirms every hit on the tokens themselves: a hash collision never flags a document.
 */
export class BatteryIndex {
  private readonly grams = new Map<number, GramSource | GramSource[]>();
  private readonly itemTokens: string[][];
  private readonly ids: string[];
  /** Gram lengths present: n, and the lengths of items shorter than n. */
  private readonly lengths: number[];

  constructor(
    readonly battery: Battery,
    readonly n: number,
    private readonly hasher: TokenHasher,
  ) {
    this.ids = battery.items.map((i) => i.id);
    this.itemTokens = battery.items.map((i) => wordTokens(normalizeText(i.text, { unicode: 'NFC', whitespace: 'collapse', case_fold: true })));
    const lengths = new Set<number>();
    this.itemTokens.forEach((tokens, item) => {
      if (tokens.length === 0) return;
      const length = Math.min(n, tokens.length);
      lengths.add(length);
      const keys = windowHashes(hashTokens(tokens, hasher), length, GRAM_SEED + length);
      for (let offset = 0; offset < keys.length; offset++) {
        const key = smallKey(keys[offset]!);
        const source: GramSource = { item, offset, length };
        const hit = this.grams.get(key);
        if (hit === undefined) this.grams.set(key, source);
        else if (Array.isArray(hit)) hit.push(source);
        else this.grams.set(key, [hit, source]);
      }
    });
    this.lengths = [...lengths].sort((x, y) => y - x);
  }

  get gramCount(): number {
    return this.grams.size;
  }

  /** The ids of the battery items the document shares a gram with, sorted; empty when it is clean. */
  touched(tokens: readonly string[], tokenHashes: Uint32Array): string[] {
    const found = new Set<number>();
    for (const length of this.lengths) {
      const keys = windowHashes(tokenHashes, length, GRAM_SEED + length);
      for (let i = 0; i < keys.length; i++) {
        const hit = this.grams.get(smallKey(keys[i]!));
        if (hit === undefined) continue;
        for (const source of Array.isArray(hit) ? hit : [hit]) {
          if (source.length === length && !found.has(source.item) && this.sameTokens(tokens, i, source)) found.add(source.item);
        }
      }
    }
    return [...found].map((item) => this.ids[item]!).sort();
  }

  private sameTokens(tokens: readonly string[], at: number, source: GramSource): boolean {
    const item = this.itemTokens[source.item]!;
    for (let k = 0; k < source.length; k++) if (tokens[at + k] !== item[source.offset + k]) return false;
    return true;
  }
}
