import type { TaskSpec } from '@ito/contracts';
import type { ReferenceOptions } from '../reference-options.js';
import { emit, type StopListener } from '../trainer-io.js';
import { answerDigits, drawProblem } from './addition.js';
import { StepContext } from './context.js';
import { runGrpoTrainer, runRollout } from './grpo.js';
import { readPolicy } from './policy-checkpoint.js';
import { greedy, logProb } from './policy.js';
import { Random } from '../random.js';
import { runDpo, runSft } from './supervised.js';

/** The reference trainer's post-training steps (SFT, DPO, RLVR's trainer and rollout) on the addition task. */
export async function runPostTraining(spec: TaskSpec, options: ReferenceOptions, scale: number, stop: StopListener): Promise<number> {
  const ctx = new StepContext(spec, options, scale, stop);
  await ctx.restore();
  switch (spec.stage) {
    case 'sft':
      return runSft(ctx);
    case 'dpo':
      return runDpo(ctx);
    case 'rlvr':
      if (spec.role === 'rollout') return runRollout(ctx);
      return runGrpoTrainer(ctx);
    default:
      throw new Error(`stage ${spec.stage} is not a post-training step`);
  }
}

/** Scores a post-training policy on held-out sums; null when the checkpoint is not such a policy. */
export async function evaluatePolicy(uri: string): Promise<Record<string, number> | null> {
  const policy = await readPolicy(uri);
  if (!policy) return null;
  const w = Float64Array.from(policy.weights);
  const rng = Random.fromSeed('addition/heldout');
  let nll = 0;
  let correct = 0;
  const n = 200;
  for (let i = 0; i < n; i++) {
    const p = drawProblem(rng);
    const want = answerDigits(p);
    nll -= logProb(w, p, want) / want.length;
    if (greedy(w, p).every((d, k) => d === want[k])) correct++;
  }
  emit({ type: 'log', message: `evaluated the ${policy.stage} policy on ${n} held-out sums` });
  return { heldout_loss: nll / n, accuracy: correct / n };
}
