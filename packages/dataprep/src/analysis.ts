import type { Battery } from './battery.js';
import { BatteryIndex } from './decontaminate.js';
import { exactDigest } from './exact-dedup.js';
import { hashTokens, type TokenHasher } from './hashing.js';
import { NearDeduper } from './near-dedup.js';
import { normalizeText, wordTokens } from './normalize.js';
import type { DataPrepParams } from './params.js';
import { shingleSet } from './shingles.js';

/**
 * What the passes need to know of one document, computed from its text alone: the exact-dedup digest, the battery
 * items it touches, its shingle set and their LSH band keys. None of it depends on other documents, so it can be
 * computed on any thread; the decisions that do (is this digest new, is there a kept near duplicate) are taken
 * afterwards, in input order, by `DataPrep.considerAnalyzed`, so the verdicts do not depend on who computed this.
 */
export interface DocAnalysis {
  /** '' when the analysis was asked for without it: the exact verdict was taken already, from the line's bytes. */
  digest: string;
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

  /** With `digest` false, the exact digest is not taken (its verdict was, from the line's bytes: `lineDigest`). */
  analyze(text: string, digest = true): DocAnalysis {
    const normalized = normalizeText(text, this.params.normalization);
    const tokens = wordTokens(normalized);
    const hashes = hashTokens(tokens, this.hasher);
    const items = this.index.touched(tokens, hashes);
    const clean = items.length === 0;
    const shingles = clean ? shingleSet(hashes, this.params.near.shingle_words) : new Uint32Array(0);
    return { digest: digest ? exactDigest(normalized) : '', items, tokens: clean ? hashes : new Uint32Array(0), shingles, keys: this.signer.bandKeys(shingles) };
  }
}
