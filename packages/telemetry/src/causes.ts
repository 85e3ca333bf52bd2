/**
 * What a booked node-second was spent on. `productive` is goodput; every other label is a badput cause, named
 * after the buckets of Google's ml-goodput-measurement library so a reader of it recognises them.
 */
export const BADPUT_CAUSES = [
  'program_startup',
  'data_prep',
  'checkpoint_save_stall',
  'checkpoint_restore',
  'wasted_progress',
  'infrastructure_recovery',
  'awaiting_operator',
  'idle',
  'other',
] as const;
export type BadputCause = (typeof BADPUT_CAUSES)[number];
export type TimeLabel = 'productive' | BadputCause;
export const TIME_LABELS: readonly TimeLabel[] = ['productive', ...BADPUT_CAUSES];

/** What interrupted a run: a lost node, a hung task, a crash or a GPU fault reported by the agent. */
export const INTERRUPTION_CAUSES = ['node_lost', 'hang', 'crash', 'gpu_fault'] as const;
export type InterruptionCause = (typeof INTERRUPTION_CAUSES)[number];
