import type { LossSpikeRule } from './pipeline.js';

/** What the rule remembers between reports of one stage attempt. */
export interface LossTracker {
  ema: number | null;
  reports: number;
  /** Consecutive reports above the bar, and the step the streak began at. */
  streak: number;
  streak_from_step: number | null;
}

export const EMPTY_LOSS_TRACKER: LossTracker = { ema: null, reports: 0, streak: 0, streak_from_step: null };

export interface LossObservation {
  tracker: LossTracker;
  /** Set when this report completes a spike: the streak's first step and the average it was judged against. */
  spike: { from_step: number; moving_average: number } | null;
}

/**
 * The stated rule: after `warmup_reports` reports, a loss above `factor` × the moving average is a spike
 * candidate; `consecutive` candidates in a row are a spike. Candidates do not move the average, so a spike
 * cannot hide by raising its own bar. Pure.
 */
export function observeLoss(rule: LossSpikeRule, tracker: LossTracker, step: number, loss: number): LossObservation {
  const warm = tracker.reports >= rule.warmup_reports && tracker.ema !== null;
  if (warm && loss > rule.factor * tracker.ema!) {
    const streak = tracker.streak + 1;
    const from = tracker.streak_from_step ?? step;
    const next = { ...tracker, reports: tracker.reports + 1, streak, streak_from_step: from };
    return { tracker: next, spike: streak >= rule.consecutive ? { from_step: from, moving_average: tracker.ema! } : null };
  }
  const ema = tracker.ema === null ? loss : rule.ema_alpha * loss + (1 - rule.ema_alpha) * tracker.ema;
  return { tracker: { ema, reports: tracker.reports + 1, streak: 0, streak_from_step: null }, spike: null };
}
