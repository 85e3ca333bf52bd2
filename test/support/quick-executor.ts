import type { Assignment } from '@ito/contracts';
import type { Executor, TaskEvents, TaskHandle, TaskOutcome } from '@ito/agent';

/** Scores that pass the example manifest's gates. */
const PASSING: Record<string, number> = { heldout_loss: 1.9, mmlu: 0.62, humaneval: 0.55, ifeval: 0.7, gsm8k: 0.5, ruler_32k: 0.78 };

/** A development stand-in for the simulated executor: steps in chunks on a timer. */
export function quickExecutor(opts: { stepsPerTick?: number; checkpointEvery?: number; metrics?: Record<string, number> } = {}): Executor {
  return {
    kind: 'simulated',
    start(a: Assignment, ev: TaskEvents): TaskHandle {
      let stop: { checkpoint: boolean; reason: string } | null = null;
      let resolve!: (o: TaskOutcome) => void;
      const done = new Promise<TaskOutcome>((r) => (resolve = r));
      const spec = a.spec;
      let step = spec.start_step;
      const tick = () => {
        if (stop) {
          if (stop.checkpoint && spec.rank === 0) ev.checkpoint({ step, uri: `${spec.checkpoint.storage}/${spec.run_id}/${spec.stage}/step-${step}`, bytes: 1, save_seconds: 1, async: false, final: true, simulated: true });
          resolve({ kind: 'stopped', reason: stop.reason, step, elapsed_s: step });
          return;
        }
        if (spec.kind === 'eval') {
          const metrics: Record<string, number> = {};
          for (const m of spec.eval?.metrics ?? []) metrics[m] = opts.metrics?.[m] ?? PASSING[m] ?? 0.5;
          resolve({ kind: 'completed', step: 0, elapsed_s: 60, metrics });
          return;
        }
        const next = Math.min(spec.total_steps, step + (opts.stepsPerTick ?? 500));
        const every = opts.checkpointEvery ?? 1000;
        if (spec.rank === 0) {
          if (Math.floor(next / every) > Math.floor(step / every) || next === spec.total_steps) {
            ev.checkpoint({ step: next, uri: `${spec.checkpoint.storage}/${spec.run_id}/${spec.stage}/step-${next}`, bytes: 1000, save_seconds: 2, async: true, simulated: true });
          }
          ev.progress({ step: next, tokens: next * spec.step_tokens, loss: 2 + 3 / Math.sqrt(1 + next), elapsed_s: (next * spec.step_tokens) / spec.planned_tokens_per_s });
        }
        step = next;
        if (step >= spec.total_steps) resolve({ kind: 'completed', step, elapsed_s: (step * spec.step_tokens) / spec.planned_tokens_per_s });
        else setTimeout(tick, 5);
      };
      setTimeout(tick, 5);
      return { done, stop: (o) => (stop ??= o) };
    },
  };
}
