/**
 * Payloads of the data-prep and ladder events, kept apart from the run's other events: they are provenance
 * (what was done to the data, by which method, against which battery), read by the desk and the auditor.
 */

export interface DataPreparedEvent {
  run_id: string;
  index: number;
  ref: string;
  input_sha256: string;
  /** Where the prepared data was written (under the run's prefix of the checkpoint storage), and its digest. */
  output_ref: string;
  output_sha256: string;
  /** Per-document removals, for the auditor. */
  report_ref: string;
  shards: number;
  docs_in: number;
  docs_out: number;
  removed: { exact: number; near: number; decontamination: number };
  /** Battery items some removed document touched, sorted (at most 1000 named; `contaminated_items_total` counts all). */
  contaminated_items: string[];
  contaminated_items_total: number;
  contaminated_fraction: number;
  declared_contaminated_fraction: number;
  /** What each pass does, in words, and every parameter it used. */
  method: { exact: string; near: string; decontamination: string; order: string; implied_threshold: number; params: Record<string, unknown> };
  /** The battery the documents were checked against: name and version, and the sha256 of its items file. */
  battery: { name: string; sha256: string; items: number };
}

/** The 150M-ladder pre-check for custom data: both proxy figures, the rule, and the verdict. */
export interface LadderDecisionEvent {
  run_id: string;
  /** Proxy eval loss of the custom mix and of the reference mix, from the two proxy tasks. */
  custom_loss: number | null;
  reference_loss: number | null;
  /** The rule, in words, and its tolerance: pass when custom ≤ reference × (1 + tolerance). */
  rule: string;
  tolerance: number;
  passed: boolean;
  /** The data refs that made the data custom. */
  custom_refs: number[];
}
