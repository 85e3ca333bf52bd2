import { Random } from '../random.js';
import { emit } from '../trainer-io.js';
import { answerDigits, drawProblem, type Problem } from './addition.js';
import { ends, type StepContext } from './context.js';
import { readPolicy } from './policy-checkpoint.js';
import { ascend, logProb, POLICY_SIZE } from './policy.js';

/** SFT's instruction set: a small fixed set of solved problems, so the policy learns some contexts and not all. */
const INSTRUCTIONS = 48;
const SFT_BATCH = 16;
const DPO_BATCH = 16;
const DPO_EVAL_PAIRS = 128;

function instructionSet(runId: string): Problem[] {
  const rng = Random.fromSeed(`${runId}/sft/instructions`);
  return Array.from({ length: INSTRUCTIONS }, () => drawProblem(rng));
}

/** SFT: maximise the log-likelihood of the correct answers; reports the mean per-digit loss, which falls. */
export async function runSft(ctx: StepContext): Promise<number> {
  const data = instructionSet(ctx.spec.run_id);
  const rng = Random.fromSeed(`${ctx.spec.run_id}/sft/order/${ctx.step}`);
  const lr = ctx.option('learning_rate', 0.05);
  const losses: number[] = [];
  while (ctx.step < ctx.spec.total_steps) {
    if (await ctx.stopped()) return 0;
    const grad = new Float64Array(POLICY_SIZE);
    let nll = 0;
    for (let i = 0; i < SFT_BATCH; i++) {
      const p = data[rng.int(data.length)]!;
      nll -= logProb(ctx.weights, p, answerDigits(p), grad, 1 / SFT_BATCH);
    }
    ascend(ctx.weights, ctx.adam, grad, lr);
    ctx.step++;
    const loss = nll / SFT_BATCH / answerDigits({ a: 0, b: 0 }).length;
    losses.push(loss);
    progress(ctx, loss);
  }
  await ctx.save();
  const { first, last } = ends(losses);
  emit({ type: 'metrics', step: ctx.step, metrics: { sft_loss_first: first, sft_loss_last: last } });
  return 0;
}

/** A wrong answer one digit away from the right one: the rejected side of a preference pair. */
function rejectedOf(p: Problem, rng: Random): number[] {
  const digits = answerDigits(p);
  const k = rng.int(digits.length);
  digits[k] = (digits[k]! + 1 + rng.int(9)) % 10;
  return digits;
}

/**
 * DPO against the frozen reference (the policy the stage starts from, or the checkpoint the recipe names):
 * minimise −log σ(β[(log π(c) − log π_ref(c)) − (log π(r) − log π_ref(r))]). Preference accuracy on held-out
 * pairs (the share whose implicit reward margin is positive) is 0 at the start, where π = π_ref, and rises.
 */
export async function runDpo(ctx: StepContext): Promise<number> {
  const beta = ctx.option('beta', 0.1);
  const lr = ctx.option('learning_rate', 0.05);
  const named = ctx.spec.recipe?.reference_policy;
  const reference = typeof named === 'string' && named.includes('://') ? await readPolicy(named) : null;
  if (typeof named === 'string' && named.includes('://') && !reference) throw new Error('reference_policy is not a policy of this trainer');
  const ref = reference ? Float64Array.from(reference.weights) : Float64Array.from(ctx.weights);
  const evalRng = Random.fromSeed(`${ctx.spec.run_id}/dpo/heldout`);
  const heldOut = Array.from({ length: DPO_EVAL_PAIRS }, () => {
    const p = drawProblem(evalRng);
    return { p, chosen: answerDigits(p), rejected: rejectedOf(p, evalRng) };
  });
  const margin = (pair: (typeof heldOut)[number]) =>
    logProb(ctx.weights, pair.p, pair.chosen) - logProb(ref, pair.p, pair.chosen) - (logProb(ctx.weights, pair.p, pair.rejected) - logProb(ref, pair.p, pair.rejected));
  const accuracy = () => heldOut.filter((pair) => margin(pair) > 0).length / heldOut.length;

  const rng = Random.fromSeed(`${ctx.spec.run_id}/dpo/pairs/${ctx.step}`);
  const accuracies: number[] = [accuracy()];
  while (ctx.step < ctx.spec.total_steps) {
    if (await ctx.stopped()) return 0;
    const grad = new Float64Array(POLICY_SIZE);
    let loss = 0;
    for (let i = 0; i < DPO_BATCH; i++) {
      const p = drawProblem(rng);
      const [c, r] = [answerDigits(p), rejectedOf(p, rng)];
      const z = beta * (logProb(ctx.weights, p, c) - logProb(ref, p, c) - (logProb(ctx.weights, p, r) - logProb(ref, p, r)));
      const sigma = 1 / (1 + Math.exp(-z));
      loss -= Math.log(Math.max(sigma, 1e-12));
      // d(log σ(z))/dz = 1 − σ(z): ascend the chosen answer's log-probability, descend the rejected one's.
      logProb(ctx.weights, p, c, grad, (beta * (1 - sigma)) / DPO_BATCH);
      logProb(ctx.weights, p, r, grad, (-beta * (1 - sigma)) / DPO_BATCH);
    }
    ascend(ctx.weights, ctx.adam, grad, lr);
    ctx.step++;
    accuracies.push(accuracy());
    progress(ctx, loss / DPO_BATCH, `preference accuracy ${accuracies.at(-1)!.toFixed(3)}`);
  }
  await ctx.save();
  // The first is the accuracy before any step (0: every margin is 0 while π = π_ref); the last a mean of the last steps.
  emit({ type: 'metrics', step: ctx.step, metrics: { dpo_preference_accuracy_first: accuracies[0]!, dpo_preference_accuracy_last: ends(accuracies).last } });
  return 0;
}

function progress(ctx: StepContext, loss: number | undefined, message?: string): void {
  if (ctx.spec.rank !== 0) return;
  const every = ctx.options.progressEverySteps ?? 10;
  if (ctx.step % every !== 0 && ctx.step !== ctx.spec.total_steps) return;
  const clock = ctx.clock();
  emit({ type: 'progress', step: ctx.step, tokens: ctx.step * ctx.spec.step_tokens, ...(loss !== undefined ? { loss } : {}), elapsed_s: clock, ...(message ? { message } : {}) });
}

export { progress };
