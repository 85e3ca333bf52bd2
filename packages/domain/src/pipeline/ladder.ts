import type { Manifest } from '@ito/contracts';

/**
 * The 150M-ladder pre-check of custom data. Before any large stage, two short proxy runs of a 150M-parameter
 * model of the run's family train the same number of tokens, one on the custom mix and one on the reference mix,
 * and report their proxy eval loss (on the same held-out set). The custom mix passes when its loss is within
 * `tolerance` of the reference's: custom ≤ reference × (1 + tolerance). A missing or non-finite figure fails: the
 * check is never passed for want of a number.
 */
export interface LadderRule {
  proxy_parameters: number;
  /** Tokens each proxy trains: 20 per parameter (the compute-optimal ratio), 3B for 150M. */
  proxy_tokens: number;
  tolerance: number;
}

export const DEFAULT_LADDER_RULE: LadderRule = { proxy_parameters: 150e6, proxy_tokens: 3e9, tolerance: 0.02 };

/** The metric each proxy task reports on completion. */
export const LADDER_METRIC = 'proxy_eval_loss';

/** The data refs (by index) whose origin marks them custom; the ladder runs when there is any. */
export function customDataRefs(manifest: Manifest): number[] {
  return manifest.data.flatMap((d, i) => (d.origin === 'custom' ? [i] : []));
}

export interface LadderVerdict {
  passed: boolean;
  rule: string;
  reason: string;
}

export function ruleText(rule: LadderRule): string {
  return `custom mix proxy eval loss ≤ reference × ${1 + rule.tolerance}`;
}

export function decideLadder(rule: LadderRule, custom: number | undefined, reference: number | undefined): LadderVerdict {
  const text = ruleText(rule);
  if (custom === undefined || reference === undefined || !Number.isFinite(custom) || !Number.isFinite(reference)) {
    return { passed: false, rule: text, reason: `the ladder decision failed: a proxy task did not report ${LADDER_METRIC}` };
  }
  const limit = reference * (1 + rule.tolerance);
  const passed = custom <= limit;
  const pct = Math.round((custom / reference - 1) * 1e4) / 100;
  return {
    passed,
    rule: text,
    reason: passed
      ? `the custom mix passed the 150M ladder: proxy eval loss ${custom} against ${reference} for the reference mix (${pct}%, within ${rule.tolerance * 100}%)`
      : `the custom mix failed the 150M ladder: proxy eval loss ${custom} is ${pct}% above the reference mix's ${reference} (at most ${rule.tolerance * 100}% allowed); no large stage was scheduled`,
  };
}
