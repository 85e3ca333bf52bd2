import type { RolloutSample, TaskSpec } from '@ito/contracts';
import { checkpointPrefix } from '@ito/domain';
import type { RolloutExchange } from './executor.js';

/**
 * The simulated executor's model of RLVR (docs/pipeline.md, "Trainer and rollout"): the same exchange as a real
 * trainer and rollout, through the same routes, with modelled work. A policy version spans a few trainer steps
 * (at most 8 versions a stage), each trained on one batch; a rollout batch takes half a version's steps to
 * generate; its verified reward is drawn with a success rate that rises with the policy version that sampled it
 * (1 − 0.7·e^(−3·version/versions), versions being the stage's); groups whose rewards are all equal are dropped (dynamic sampling) and counted.
 */
export const ROLLOUT_SECONDS_PER_TRAINER_STEP = 0.5;
const PROMPTS = 4;
/**
 * At most this many policy versions per stage attempt: a long stage syncs weights every few steps (as large runs
 * do), so the exchange's round trips, not the modelled clock, never set a fast simulation's pace.
 */
export const MAX_POLICY_VERSIONS = 8;

export class SimulatedRlvr {
  private version = 0;
  private seq = 0;
  private postedAtVersion = 0;
  private accepted = 0;
  private rejected = 0;
  private dropped = 0;
  private readonly rewards: number[] = [];
  private readonly staleness: number;
  private readonly group: number;
  private readonly dynamicSampling: boolean;
  /** Trainer steps per policy version (and per batch). */
  readonly stepsPerVersion: number;

  constructor(
    private readonly spec: TaskSpec,
    private readonly exchange: RolloutExchange,
  ) {
    const recipe = spec.recipe ?? {};
    this.staleness = typeof recipe.max_policy_staleness === 'number' ? recipe.max_policy_staleness : 0;
    this.group = typeof recipe.group_size === 'number' ? Math.min(recipe.group_size, 64) : 8;
    this.dynamicSampling = typeof recipe.dynamic_sampling === 'boolean' ? recipe.dynamic_sampling : recipe.dapo === true;
    this.stepsPerVersion = Math.max(1, Math.ceil((spec.total_steps - spec.start_step) / MAX_POLICY_VERSIONS));
  }

  /** Trainer: a version's first step needs a batch; the others train on it. */
  needsBatch(step: number): boolean {
    return (step - this.spec.start_step) % this.stepsPerVersion === 0;
  }

  /** Trainer: a version ends after its last step (or the stage's). */
  versionEnds(step: number): boolean {
    return (step - this.spec.start_step) % this.stepsPerVersion === 0 || step === this.spec.total_steps;
  }

  /** Trainer: waits briefly for a batch within the bound; true when it has one to train on. */
  async takeBatch(): Promise<boolean> {
    const { batches, rejected } = await this.exchange.pollBatches({ policy_version: this.version, wait_s: 1, max: 1 });
    this.rejected += rejected.length;
    const fresh = batches.filter((b) => this.version - b.policy_version >= 0 && this.version - b.policy_version <= this.staleness);
    for (const b of fresh) {
      this.accepted++;
      this.dropped += b.dropped_groups;
      this.rewards.push(b.samples.reduce((sum, x) => sum + x.reward, 0) / b.samples.length);
    }
    return fresh.length > 0;
  }

  /** Trainer: the step's weights are the next policy version (a simulated one: nothing is written). */
  async publish(step: number): Promise<void> {
    this.version++;
    await this.exchange.publishPolicy({ version: this.version, uri: `${checkpointPrefix(this.spec.checkpoint.storage, this.spec.run_id)}rlvr/policy-a${this.spec.attempt}-v${this.version}-step-${step}` });
  }

  metrics(): Record<string, number> {
    const k = Math.max(1, Math.min(10, Math.floor(this.rewards.length / 2)));
    const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
    return {
      rlvr_reward_first: mean(this.rewards.slice(0, k)),
      rlvr_reward_last: mean(this.rewards.slice(-k)),
      rlvr_batches_accepted: this.accepted,
      rlvr_batches_rejected: this.rejected,
      rlvr_dropped_groups: this.dropped,
      rlvr_policy_version: this.version,
    };
  }

  /** Rollout: posts one batch sampled at its current version; learns the newest version from the answer. */
  async postBatch(): Promise<{ trainerDone: boolean; ahead: boolean }> {
    const { samples, dropped } = this.sample();
    const answer = await this.exchange.postBatch({ policy_version: this.version, samples, dropped_groups: dropped });
    this.postedAtVersion++;
    if (answer.policy.version > this.version) {
      this.version = answer.policy.version;
      this.postedAtVersion = 0;
    }
    return { trainerDone: answer.trainer_done, ahead: this.postedAtVersion > this.staleness };
  }

  private sample(): { samples: RolloutSample[]; dropped: number } {
    const versions = Math.ceil((this.spec.total_steps - this.spec.start_step) / this.stepsPerVersion);
    const rate = 1 - 0.7 * Math.exp((-3 * this.version) / Math.max(1, versions));
    const samples: RolloutSample[] = [];
    let dropped = 0;
    for (let tries = 0, g = 0; g < PROMPTS && tries < PROMPTS * 8; tries++) {
      const rewards = Array.from({ length: this.group }, () => (Math.random() < rate ? 1 : 0));
      if (this.dynamicSampling && rewards.every((r) => r === rewards[0])) {
        dropped++;
        continue;
      }
      const id = ++this.seq;
      samples.push(...rewards.map((reward) => ({ group: g, prompt: `simulated prompt ${id}`, completion: reward ? 'verified' : 'wrong', reward, logprob: -1, tokens: 128 })));
      g++;
    }
    if (samples.length === 0) samples.push({ group: 0, prompt: 'simulated prompt', completion: 'wrong', reward: 0, logprob: -1, tokens: 128 });
    return { samples, dropped };
  }
}
