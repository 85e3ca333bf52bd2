import type { DocAnalysis } from './analysis.js';
import type { Battery } from './battery.js';
import { BatteryIndex } from './decontaminate.js';
import { ExactDeduper, exactDigest } from './exact-dedup.js';
import { createTokenHasher, hashTokens, type TokenHasher } from './hashing.js';
import { NearDeduper } from './near-dedup.js';
import { normalizeText, wordTokens } from './normalize.js';
import { decontaminationMethod, impliedThreshold, resolveParams, type DataPrepParams, type DeepPartial } from './params.js';

export type Verdict =
  | { ordinal: number; kept: true }
  | { ordinal: number; kept: false; reason: 'exact'; duplicate_of: number }
  | { ordinal: number; kept: false; reason: 'decontamination'; items: string[] }
  | { ordinal: number; kept: false; reason: 'near'; duplicate_of: number; jaccard: number };

export interface DataPrepSummary {
  docs_in: number;
  docs_out: number;
  removed: { exact: number; near: number; decontamination: number };
  /** Battery items some removed document touched, sorted: the evals that were at risk. */
  contaminated_items: string[];
  /** Documents removed by decontamination over documents in: what a manifest's contaminated_fraction declares. */
  contaminated_fraction: number;
  battery: { name: string; items: number };
  method: DataPrepMethod;
}

export interface DataPrepMethod {
  exact: string;
  near: string;
  decontamination: string;
  order: string;
  params: DataPrepParams;
  implied_threshold: number;
}

/**
 * The data-prep passes over one stream of documents, in input order: exact dedup, then decontamination (a
 * contaminated document never enters the near-dup index, so it cannot be a cluster's keeper), then near dedup.
 * Each removed document is counted once, by the first pass that removed it. Pure and streaming: the caller does
 * the reading and writing and hands each document's text to `consider`.
 */
export class DataPrep {
  private ordinal = 0;
  private readonly removed = { exact: 0, near: 0, decontamination: 0 };
  private readonly contaminated = new Set<string>();
  private readonly exact = new ExactDeduper();
  private readonly near: NearDeduper;
  private readonly index: BatteryIndex;

  private constructor(
    readonly params: DataPrepParams,
    private readonly battery: Battery,
    private readonly hasher: TokenHasher,
  ) {
    this.near = new NearDeduper(params.near);
    this.index = new BatteryIndex(battery, params.decontamination.ngram, hasher);
  }

  static async create(battery: Battery, overrides: DeepPartial<DataPrepParams> = {}): Promise<DataPrep> {
    return new DataPrep(resolveParams(overrides), battery, await createTokenHasher());
  }

  consider(text: string): Verdict {
    const normalized = normalizeText(text, this.params.normalization);
    const exact = this.considerDigest(exactDigest(normalized));
    return exact.kept ? this.afterExact(exact.ordinal, normalized) : exact;
  }

  /**
   * The same verdict as {@link consider} for a document whose exact digest was taken from its line's bytes
   * (`lineDigest`): an exact duplicate is decided from the digest alone and `text` is never called for it, so its
   * line need not be decoded nor parsed.
   */
  considerDigested(digest: string, text: () => string): Verdict {
    const exact = this.considerDigest(digest);
    return exact.kept ? this.afterExact(exact.ordinal, normalizeText(text(), this.params.normalization)) : exact;
  }

  /**
   * The first pass alone, in input order: the next ordinal and, from the document's exact digest, its removal as
   * an exact duplicate, or `kept` meaning only that it passed exact dedup. A document it keeps must then be
   * decided, in the same order, by {@link considerAnalyzedAfterExact} with this ordinal.
   */
  considerDigest(digest: string): Verdict {
    const ordinal = this.ordinal++;
    const first = this.exact.considerDigest(ordinal, digest);
    if (first === null) return { ordinal, kept: true };
    this.removed.exact++;
    return { ordinal, kept: false, reason: 'exact', duplicate_of: first };
  }

  private afterExact(ordinal: number, normalized: string): Verdict {
    const tokens = wordTokens(normalized);
    const hashes = hashTokens(tokens, this.hasher);
    const items = this.index.touched(tokens, hashes);
    if (items.length > 0) {
      this.removed.decontamination++;
      for (const item of items) this.contaminated.add(item);
      return { ordinal, kept: false, reason: 'decontamination', items };
    }
    const dup = this.near.consider(ordinal, hashes);
    if (dup) {
      this.removed.near++;
      return { ordinal, kept: false, reason: 'near', duplicate_of: dup.duplicate_of, jaccard: dup.jaccard };
    }
    return { ordinal, kept: true };
  }

  /**
   * The passes after exact dedup for the document {@link considerDigest} gave `ordinal` and kept, from its analysis
   * (by a `DocAnalyzer` with these params and battery): the order-dependent decisions only, so the pure work can be
   * done on other threads; called in the same order as `considerDigest`, after every earlier document's. Together
   * they give the verdict {@link consider} gives for the document's text.
   */
  considerAnalyzedAfterExact(ordinal: number, analysis: DocAnalysis): Verdict {
    if (analysis.items.length > 0) {
      this.removed.decontamination++;
      for (const item of analysis.items) this.contaminated.add(item);
      return { ordinal, kept: false, reason: 'decontamination', items: analysis.items };
    }
    const dup = this.near.considerKeyed(ordinal, analysis.tokens, analysis.shingles, analysis.keys);
    if (dup) {
      this.removed.near++;
      return { ordinal, kept: false, reason: 'near', duplicate_of: dup.duplicate_of, jaccard: dup.jaccard };
    }
    return { ordinal, kept: true };
  }

  summary(): DataPrepSummary {
    const docsIn = this.ordinal;
    const removed = { ...this.removed };
    return {
      docs_in: docsIn,
      docs_out: docsIn - removed.exact - removed.near - removed.decontamination,
      removed,
      contaminated_items: [...this.contaminated].sort(),
      contaminated_fraction: docsIn === 0 ? 0 : removed.decontamination / docsIn,
      battery: { name: this.battery.name, items: this.battery.items.length },
      method: describeMethod(this.params),
    };
  }
}

export function describeMethod(params: DataPrepParams): DataPrepMethod {
  const { near } = params;
  return {
    exact: `the same text after Unicode ${params.normalization.unicode}, white space collapsed${params.normalization.case_fold ? ', case folded' : ''}, compared by ${params.exact.hash} digest`,
    near: `one-permutation minhash with optimal densification over ${near.shingle_words}-word shingles, ${near.permutations} bins, lsh ${near.bands} bands × ${near.rows} rows, candidates confirmed at exact jaccard ≥ ${near.jaccard_threshold}; the earliest document of a cluster is kept`,
    decontamination: decontaminationMethod(params),
    order: 'exact, decontamination, near',
    params,
    implied_threshold: Math.round(impliedThreshold(near.bands, near.rows) * 1e4) / 1e4,
  };
}
