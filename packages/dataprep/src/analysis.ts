import type { Battery } from './battery.js';
import { BatteryIndex } from './decontaminate.js';
import { hashTokens, type TokenHasher } from './hashing.js';
import { NearDeduper } from './near-dedup.js';
import { normalizeText, wordTokens } from './normalize.js';
import type { DataPrepParams } from './params.js';
import { shingleSet } from './shingles.js';

/**
 * What the passes after exact dedup need to know of one document, computed from its text alone: the battery items
 * it touches, its shingle set and their LSH band keys. None of it depends on other documents, so it can be computed
 * on any thread; the decisions that do (is there a kept near duplicate) are taken afterwards, in input order, by
 * `DataPrep.considerAnalyzedAfterExact`, so the verdicts do not depend on who computed this. Exact dedup needs no
 * analysis: its digest is taken from the line's bytes (`lineDigest`) and decided before (`DataPrep.considerDigest`).
 */
export interface DocAnalysis {
  /** Battery item ids the document shares an n-gram with, sorted. */
  items: string[];
  /** The word tokens' hashes and their shingle set; both empty when the document is contaminated (it never reaches near dedup). */
  tokens: Uint32Array;
  shingles: Uint32Array;
  keys: Uint32Array;
}

export class DocAnalyzer {
  private readonly index: BatteryIndex;
  private readonly signer: NearDeduper;

  constructor(
    private readonly params: DataPrepParams,
    battery: Battery,
    private readonly hasher: TokenHasher,
  ) {
    this.index = new BatteryIndex(battery, params.decontamination.ngram, hasher);
    this.signer = new NearDeduper(params.near);
  }

  analyze(text: string): DocAnalysis {
    const normalized = normalizeText(text, this.params.normalization);
    const tokens = wordTokens(normalized);
    const hashes = hashTokens(tokens, this.hasher);
    const items = this.index.touched(tokens, hashes);
    const clean = items.length === 0;
    const shingles = clean ? shingleSet(hashes, this.params.near.shingle_words) : new Uint32Array(0);
    return { items, tokens: clean ? hashes : new Uint32Array(0), shingles, keys: this.signer.bandKeys(shingles) };
  }
}
