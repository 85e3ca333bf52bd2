import { MAX_ROLLOUT_SAMPLES, type RolloutSample } from '@ito/contracts';
import { checkpointPrefix } from '@ito/domain';
import { Random } from '../random.js';
import { emit } from '../trainer-io.js';
import { ANSWER_DIGITS, answerDigits, completionText, drawProblem, overlongPenalty, parseCompletion, parsePrompt, promptOf, verify } from './addition.js';
import { ends, type StepContext } from './context.js';
import { encodePolicy, readPolicy, removePolicy, writePolicy } from './policy-checkpoint.js';
import { ascend, logProb, POLICY_SIZE, sample } from './policy.js';
import { progress } from './supervised.js';

/**
 * RLVR with GRPO and the DAPO options, as two processes on two nodes that meet only through the control plane:
 * the rollout task samples groups of completions, scores them with the verifier and posts them tagged with its
 * policy version; the rank-0 trainer takes the batches within the staleness bound, takes one clipped policy-
 * gradient step on group-relative advantages, and publishes the next version.
 */
/** Prompts per batch, fewer for large groups: a batch holds at most 256 samples (MAX_ROLLOUT_SAMPLES). */
const PROMPTS_PER_BATCH = 4;

export interface Settings {
  group: number;
  epsLow: number;
  epsHigh: number;
  klWeight: number;
  dynamicSampling: boolean;
  tokenLevel: boolean;
  overlong: boolean;
  maxTokens: number;
  buffer: number;
  staleness: number;
  lr: number;
}

function settingsOf(ctx: StepContext): Settings {
  const dapo = ctx.flag('dapo', false);
  const epsLow = ctx.option('clip_eps_low', 0.2);
  const maxTokens = ctx.option('max_response_tokens', 4096);
  return {
    group: ctx.option('group_size', 8),
    epsLow,
    epsHigh: ctx.option('clip_eps_high', dapo ? Math.max(epsLow, 0.28) : epsLow),
    klWeight: ctx.option('kl_weight', 0),
    dynamicSampling: ctx.flag('dynamic_sampling', dapo),
    tokenLevel: ctx.flag('token_level_loss', dapo),
    overlong: ctx.flag('overlong_shaping', dapo),
    maxTokens,
    buffer: ctx.option('overlong_buffer_tokens', Math.max(1, Math.floor(maxTokens / 4))),
    staleness: ctx.option('max_policy_staleness', 0),
    lr: ctx.option('learning_rate', 0.1),
  };
}

async function exchange(ctx: StepContext, line: Parameters<typeof emit>[0]): Promise<Record<string, any>> {
  emit(line);
  const reply = await ctx.stop.nextReply();
  if (!reply) throw new Error('the agent closed the exchange');
  if (reply.type === 'exchange_refused') throw new Error(`the control plane refused the exchange (${String(reply.code)})`);
  return reply;
}

/** The rank-0 trainer. Other trainer ranks hold the same replica here and end once rank 0 would. */
export async function runGrpoTrainer(ctx: StepContext): Promise<number> {
  if (ctx.spec.rank !== 0) {
    emit({ type: 'log', message: 'rlvr: rank 0 trains the policy for this reference trainer; this rank has nothing to do' });
    return 0;
  }
  const s = settingsOf(ctx);
  const reference = Float64Array.from(ctx.weights);
  const perStep = ctx.options.batchesPerStep ?? 1;
  let version = 0;
  // The verified reward the policy expects on held-out prompts: P(the exact sum), averaged. Measured on fixed
  // prompts, not on the batches, because dynamic sampling keeps only the groups whose rewards differ.
  const heldOut = (() => {
    const rng = Random.fromSeed(`${ctx.spec.run_id}/rlvr/heldout`);
    return Array.from({ length: 64 }, () => drawProblem(rng));
  })();
  const expectedReward = () => heldOut.reduce((sum, p) => sum + Math.exp(logProb(ctx.weights, p, answerDigits(p))), 0) / heldOut.length;
  const rewards: number[] = [expectedReward()];
  const published: string[] = [];
  const batchRewards: number[] = [];
  let accepted = 0;
  let rejected = 0;
  let dropped = 0;
  let maxStalenessSeen = 0;
  // Colocated (no rollout node): this trainer samples each batch itself, with the policy it holds, and posts it
  // through the exchange like a rollout task, so the control plane judges and counts it the same way.
  const colocatedRng = ctx.spec.rollout === 'colocated' ? Random.fromSeed(`${ctx.spec.run_id}/rlvr/colocated/${ctx.spec.attempt}`) : null;
  while (ctx.step < ctx.spec.total_steps) {
    if (await ctx.stopped()) return 0;
    if (colocatedRng) {
      for (let i = 0; i < perStep; i++) {
        const { samples, droppedGroups } = sampleBatch(ctx.weights, s, colocatedRng);
        await exchange(ctx, { type: 'rollout_batch', policy_version: version, samples, dropped_groups: droppedGroups });
      }
    }
    const answer = await exchange(ctx, { type: 'want_batches', policy_version: version, wait_s: 5, max: perStep });
    const batches = answer.batches as Array<{ policy_version: number; staleness: number; samples: RolloutSample[]; dropped_groups: number }>;
    rejected += (answer.rejected as unknown[]).length;
    // The control plane judged them already; the trainer holds to the same rule, whatever a server says.
    const fresh = batches.filter((b) => version - b.policy_version >= 0 && version - b.policy_version <= s.staleness);
    if (fresh.length === 0) continue;
    accepted += fresh.length;
    for (const b of fresh) {
      dropped += b.dropped_groups;
      maxStalenessSeen = Math.max(maxStalenessSeen, version - b.policy_version);
    }
    const samples = fresh.flatMap((b) => b.samples);
    batchRewards.push(samples.filter((x) => x.reward > 0).length / samples.length);
    grpoStep(ctx, s, samples, reference);
    rewards.push(expectedReward());
    ctx.step++;
    version++;
    const uri = `${checkpointPrefix(ctx.spec.checkpoint.storage, ctx.spec.run_id)}rlvr/policy-a${ctx.spec.attempt}-v${version}`;
    await writePolicy(uri, encodePolicy({ run_id: ctx.spec.run_id, stage: ctx.spec.stage, step: ctx.step, version, weights: ctx.weights, adam: null }));
    await exchange(ctx, { type: 'policy', version, uri });
    published.push(uri);
    // Policy versions are not checkpoints (the ledger does not list them, so cleanup would not find them): the
    // trainer removes those no rollout can still be reading, and the rest when the stage ends.
    while (published.length > s.staleness + 3) await removePolicy(published.shift()!);
    // No loss is reported: a reward near 1 makes 1 − reward tiny and noisy, which the loss-spike rule would misread.
    progress(ctx, undefined, `verified reward ${rewards.at(-1)!.toFixed(3)} at policy version ${version}`);
  }
  for (const uri of published.splice(0)) await removePolicy(uri);
  await ctx.save(false, version);
  // The first is the expected reward before any step; the last a mean of the last steps'.
  const [first, last] = [rewards[0]!, ends(rewards).last];
  emit({
    type: 'metrics',
    step: ctx.step,
    metrics: { rlvr_reward_first: first, rlvr_reward_last: last, rlvr_batch_reward_last: ends(batchRewards).last, rlvr_batches_accepted: accepted, rlvr_batches_rejected: rejected, rlvr_dropped_groups: dropped, rlvr_max_staleness: maxStalenessSeen, rlvr_policy_version: version },
  });
  return 0;
}

/** One step on the batch's samples: group-relative advantages, a clipped ratio against the sampling policy. */
export function grpoStep(ctx: StepContext, s: Settings, samples: RolloutSample[], reference: Float64Array): void {
  const groups = new Map<number, RolloutSample[]>();
  for (const x of samples) groups.set(x.group, [...(groups.get(x.group) ?? []), x]);
  const grad = new Float64Array(POLICY_SIZE);
  const totalTokens = samples.reduce((n, x) => n + Math.max(1, x.tokens), 0);
  for (const group of groups.values()) {
    const mean = group.reduce((a, x) => a + x.reward, 0) / group.length;
    const std = Math.sqrt(group.reduce((a, x) => a + (x.reward - mean) ** 2, 0) / group.length);
    if (std === 0) continue; // No signal: every completion scored the same.
    for (const x of group) {
      const p = parsePrompt(x.prompt);
      const digits = parseCompletion(x.completion);
      if (!p || !digits) continue;
      const advantage = (x.reward - mean) / (std + 1e-6);
      const lp = logProb(ctx.weights, p, digits);
      const ratio = Math.exp(lp - x.logprob);
      // The clipped surrogate's gradient is zero where clipping binds: clip-higher lets rare good answers grow further.
      const clipped = (advantage > 0 && ratio > 1 + s.epsHigh) || (advantage < 0 && ratio < 1 - s.epsLow);
      const weight = s.tokenLevel ? Math.max(1, x.tokens) / totalTokens : 1 / samples.length;
      let scale = clipped ? 0 : ratio * advantage * weight;
      if (s.klWeight > 0) scale -= s.klWeight * (lp - logProb(reference, p, digits)) * weight;
      if (scale !== 0) logProb(ctx.weights, p, digits, grad, scale);
    }
  }
  ascend(ctx.weights, ctx.adam, grad, s.lr);
}

/**
 * A rollout task: samples with the newest policy it has heard of, tags each batch with that version, and ends
 * when the trainer is done. `--stale-batch-every n` (tests) samples every n-th batch with a policy older than the
 * staleness bound allows, tagged truthfully, so the bound is seen to hold.
 */
export async function runRollout(ctx: StepContext): Promise<number> {
  const s = settingsOf(ctx);
  const rng = Random.fromSeed(`${ctx.spec.run_id}/rlvr/rollout/${ctx.spec.rank}/${ctx.spec.attempt}`);
  const policies = new Map<number, Float64Array>([[0, Float64Array.from(ctx.weights)]]);
  let version = 0;
  let posted = 0;
  let postedAtVersion = 0;
  for (;;) {
    if (await ctx.stopped()) return 0;
    const staleEvery = ctx.options.staleBatchEvery;
    const old = staleEvery && (posted + 1) % staleEvery === 0 ? [...policies.keys()].filter((v) => version - v > s.staleness).sort((a, b) => a - b)[0] : undefined;
    const used = old ?? version;
    const { samples, droppedGroups } = sampleBatch(policies.get(used)!, s, rng);
    const answer = await exchange(ctx, { type: 'rollout_batch', policy_version: used, samples, dropped_groups: droppedGroups });
    posted++;
    postedAtVersion++;
    if (answer.trainer_done) {
      emit({ type: 'log', message: `rollout: the trainer is done after ${posted} batches` });
      return 0;
    }
    const policy = answer.policy as { version: number; uri: string | null };
    if (policy.version > version && policy.uri) {
      // The trainer removes versions no longer needed; one gone already is skipped, the next answer names a newer one.
      const stored = await readPolicy(policy.uri).catch(() => undefined);
      if (stored === undefined) continue;
      if (!stored) throw new Error('the published policy is not one of this trainer');
      version = policy.version;
      postedAtVersion = 0;
      policies.set(version, Float64Array.from(stored.weights));
      // Keep the few versions the stale-batch test needs, not the whole history.
      for (const v of [...policies.keys()]) if (v < version - s.staleness - 2) policies.delete(v);
    } else if (postedAtVersion >= s.staleness + 1) {
      // Ahead of the trainer by the whole bound: anything more would only be rejected. Give it a moment.
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

export function sampleBatch(weights: Float64Array, s: Settings, rng: Random): { samples: RolloutSample[]; droppedGroups: number } {
  const samples: RolloutSample[] = [];
  let droppedGroups = 0;
  let group = 0;
  const prompts = Math.max(1, Math.min(PROMPTS_PER_BATCH, Math.floor(MAX_ROLLOUT_SAMPLES / s.group)));
  for (let tries = 0; group < prompts && tries < prompts * 8; tries++) {
    const p = drawProblem(rng);
    const completions = Array.from({ length: s.group }, () => {
      const { digits, logprob } = sample(weights, p, rng);
      const tokens = ANSWER_DIGITS;
      const reward = verify(p, digits) + (s.overlong ? overlongPenalty(tokens, s.maxTokens, s.buffer) : 0);
      return { group, prompt: promptOf(p), completion: completionText(digits), reward, logprob, tokens };
    });
    // Dynamic sampling: a group whose rewards are all equal carries no advantage; draw another prompt instead.
    if (s.dynamicSampling && completions.every((c) => c.reward === completions[0]!.reward)) {
      droppedGroups++;
      continue;
    }
    samples.push(...completions);
    group++;
  }
  if (samples.length === 0) {
    // Every group was uniform: send one anyway so the trainer is never starved (it contributes no gradient).
    const p = drawProblem(rng);
    const { digits, logprob } = sample(weights, p, rng);
    samples.push({ group: 0, prompt: promptOf(p), completion: completionText(digits), reward: verify(p, digits), logprob, tokens: ANSWER_DIGITS });
  }
  return { samples, droppedGroups };
}
