import type { ActiveTask } from './observations.js';

/**
 * Seconds per step the monitor has measured for each stage of each run, kept across that stage's attempts. A resumed
 * attempt's nodes start with no measurement of their own (it takes two moves of the step), and the plan's step time
 * is a model (it knows nothing of a node's real pace or of a simulated clock): a hang before the node's own step
 * time is measured is judged on the stage's measured one instead. Kept in the monitor's memory: a monitor that took
 * over since falls back on the plan until the stage is measured again. Entries not refreshed for an hour go.
 */
export class StageStepTimes {
  private readonly byStage = new Map<string, { step_s: number; seen_at: number }>();

  constructor(private readonly forgetAfterMs = 3_600_000) {}

  /** Notes this sweep's measurements (the slowest node sets a stage's pace) and gives each task its stage's. */
  apply(tasks: readonly ActiveTask[], now: Date): void {
    const measured = new Map<string, number>();
    for (const t of tasks) {
      const s = t.observation.progress?.step_s;
      if (typeof s === 'number' && s > 0) measured.set(keyOf(t), Math.max(measured.get(keyOf(t)) ?? 0, s));
    }
    for (const [key, step_s] of measured) this.byStage.set(key, { step_s, seen_at: now.getTime() });
    for (const [key, entry] of this.byStage) if (now.getTime() - entry.seen_at > this.forgetAfterMs) this.byStage.delete(key);
    for (const t of tasks) t.observation.stage_step_s = this.byStage.get(keyOf(t))?.step_s ?? null;
  }
}

const keyOf = (t: ActiveTask) => `${t.run_id}\u0000${t.stage}`;
