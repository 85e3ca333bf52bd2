import type { DataPrepSummary } from './prepare.js';

/** What a manifest declares about one source's decontamination (its `decontamination` object). */
export interface DeclaredDecontamination {
  eval_suite: string;
  method: string;
  contaminated_fraction: number;
}

/**
 * Whether a source's declared decontamination agrees with what the passes found: the same battery, the same
 * method, and a contaminated fraction within one document's worth (1 / documents in) of the one found, either
 * way — a declaration that hides contamination and one that cannot be reproduced are both provenance the
 * approver was misled by. Returns what disagrees, or null.
 */
export function provenanceDisagreement(declared: DeclaredDecontamination, found: DataPrepSummary, battery: string): string | null {
  if (declared.eval_suite !== battery) return `declares a check against ${declared.eval_suite}, but the run's battery is ${battery}`;
  if (declared.method !== found.method.decontamination) return `declares the method ${declared.method}, but the stage measures ${found.method.decontamination}`;
  const tolerance = found.docs_in === 0 ? 0 : 1 / found.docs_in;
  const delta = Math.abs(declared.contaminated_fraction - found.contaminated_fraction);
  if (delta > tolerance + 1e-12) {
    return `declares a contaminated fraction of ${declared.contaminated_fraction}, but ${found.removed.decontamination} of ${found.docs_in} documents (${round(found.contaminated_fraction)}) overlap the battery`;
  }
  return null;
}

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
