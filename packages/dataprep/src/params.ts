/**
 * The parameters of the data-prep passes, stated in full in every `DataPrepared` event so a reader can tell
 * exactly what was removed and why. Defaults follow common practice for web-scale pre-training data.
 */
export interface DataPrepParams {
  normalization: {
    /** Unicode normalisation form applied before hashing. */
    unicode: 'NFC';
    /** Every run of Unicode white space becomes one space; leading and trailing white space is dropped. */
    whitespace: 'collapse';
    /** Lower-case the text before the exact-dedup hash (shingles and n-grams are always case-folded). */
    case_fold: boolean;
  };
  /**
   * The digest exact dedup compares texts by: HighwayHash-128 under a key drawn at random per process thread and
   * never written anywhere (./fingerprint.ts), so two documents are duplicates exactly when their normalised texts
   * are the same (a collision by chance is 2^-128 a pair, and nobody can aim for one without the key).
   */
  exact: { hash: 'highwayhash128-keyed' };
  near: {
    /** Shingles are runs of this many consecutive word tokens. */
    shingle_words: number;
    /** MinHash signature length (the bins of one-permutation MinHash; the name is kept); must equal bands × rows. */
    permutations: number;
    bands: number;
    rows: number;
    /** A candidate pair is a duplicate only when the exact Jaccard of its shingle sets reaches this. */
    jaccard_threshold: number;
    /** Seed of the MinHash: the same seed gives the same signatures, so runs are reproducible. */
    seed: number;
  };
  decontamination: {
    /** A training document touching any n-gram of a battery item (n word tokens) is contaminated. */
    ngram: number;
  };
}

export const DEFAULT_DATA_PREP_PARAMS: DataPrepParams = {
  normalization: { unicode: 'NFC', whitespace: 'collapse', case_fold: false },
  exact: { hash: 'highwayhash128-keyed' },
  // 20 bands × 5 rows: the banding's S-curve crosses 1/2 near Jaccard 0.55, and a pair at Jaccard 0.8 becomes a
  // candidate with probability 1 − (1 − 0.8⁵)²⁰ ≈ 0.9996, so verification at 0.8 loses almost nothing.
  near: { shingle_words: 5, permutations: 100, bands: 20, rows: 5, jaccard_threshold: 0.8, seed: 0x1705 },
  // 13-grams, as the GPT-3 and Llama reports used for their contamination analyses.
  decontamination: { ngram: 13 },
};

/**
 * The Jaccard similarity at which LSH banding with `bands` bands of `rows` rows makes a pair a candidate with
 * probability about one half: (1/b)^(1/r).
 */
export function impliedThreshold(bands: number, rows: number): number {
  return (1 / bands) ** (1 / rows);
}

/** Probability that a pair at Jaccard similarity `s` shares at least one band: 1 − (1 − s^r)^b. */
export function candidateProbability(s: number, bands: number, rows: number): number {
  return 1 - (1 - s ** rows) ** bands;
}

export class DataPrepParamsError extends Error {
  override readonly name = 'DataPrepParamsError';
}

/** Fills the defaults in and refuses parameters the passes cannot honour. */
export function resolveParams(overrides: DeepPartial<DataPrepParams> = {}): DataPrepParams {
  const p: DataPrepParams = {
    normalization: { ...DEFAULT_DATA_PREP_PARAMS.normalization, ...overrides.normalization },
    exact: { ...DEFAULT_DATA_PREP_PARAMS.exact, ...overrides.exact },
    near: { ...DEFAULT_DATA_PREP_PARAMS.near, ...overrides.near },
    decontamination: { ...DEFAULT_DATA_PREP_PARAMS.decontamination, ...overrides.decontamination },
  };
  const { shingle_words, permutations, bands, rows, jaccard_threshold } = p.near;
  const intIn = (v: number, lo: number, hi: number) => Number.isInteger(v) && v >= lo && v <= hi;
  if (!intIn(shingle_words, 1, 64)) throw new DataPrepParamsError('near.shingle_words must be an integer from 1 to 64');
  if (!intIn(bands, 1, 1024) || !intIn(rows, 1, 64)) throw new DataPrepParamsError('near.bands (1 to 1024) and near.rows (1 to 64) must be integers');
  if (permutations !== bands * rows) throw new DataPrepParamsError('near.permutations must equal near.bands × near.rows');
  if (!(jaccard_threshold > 0 && jaccard_threshold <= 1)) throw new DataPrepParamsError('near.jaccard_threshold must be in (0, 1]');
  if (!intIn(p.near.seed, 0, 0xffffffff)) throw new DataPrepParamsError('near.seed must be a 32-bit unsigned integer');
  if (!intIn(p.decontamination.ngram, 1, 64)) throw new DataPrepParamsError('decontamination.ngram must be an integer from 1 to 64');
  return p;
}

export type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? Partial<T[K]> : T[K] };

/** The method name a manifest's decontamination provenance must declare for these parameters. */
export function decontaminationMethod(params: DataPrepParams): string {
  return `${params.decontamination.ngram}-gram-overlap`;
}
