import { z } from 'zod';
import { DIRECTIVES } from './agent-protocol.js';

/**
 * The RLVR exchange between rollout and trainer tasks (docs/pipeline.md, "Trainer and rollout"), through the
 * control plane: a rollout task posts batches of verified completions tagged with the policy version that
 * generated them; the trainer publishes each new policy version (its weights stored under the run's checkpoint
 * storage) and long-polls the batches, of which only those at most `max_policy_staleness` versions behind it are
 * handed over; the others are rejected and counted. Everything arrives from a node, so everything is bounded.
 */
const attempt = z.number().int().min(1).max(10_000);
const seq = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const version = z.number().int().min(0).max(1_000_000_000);
const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const storageUri = z.string().min(1).max(2048).regex(/^[a-z][a-z0-9+.-]*:\/\/[^\s]+$/, 'expected a URI such as file:///path or s3://bucket/key');

export const MAX_ROLLOUT_SAMPLES = 256;
export const MAX_BATCHES_PER_POLL = 4;
export const ROLLOUT_POLL_MAX_WAIT_S = 30;

/** One sampled completion of one prompt, with the verifier's reward and the behaviour policy's log-probability. */
export const rolloutSampleSchema = z.strictObject({
  /** Completions of one prompt share a group: GRPO compares rewards within it. */
  group: z.number().int().min(0).max(4095),
  prompt: z.string().max(256),
  completion: z.string().max(1024),
  reward: z.number().finite().min(-1e6).max(1e6),
  /** Sum of the completion's token log-probabilities under the policy that sampled it (≤ 0). */
  logprob: z.number().finite().min(-1e9).max(0),
  tokens: z.number().int().min(0).max(1_048_576),
  truncated: z.boolean().optional(),
});
export type RolloutSample = z.infer<typeof rolloutSampleSchema>;

export const rolloutBatchBody = z.strictObject({
  attempt,
  /** Grows by one per batch of this task: a resent batch is acknowledged, not stored twice. */
  seq,
  /** The policy version whose weights sampled every completion of the batch. */
  policy_version: version,
  samples: z.array(rolloutSampleSchema).min(1).max(MAX_ROLLOUT_SAMPLES),
  /** Prompt groups dynamic sampling dropped (every reward equal) while filling this batch. */
  dropped_groups: count.max(1_000_000).optional(),
});
export type RolloutBatchBody = z.infer<typeof rolloutBatchBody>;

export const policyBody = z.strictObject({
  attempt,
  version: version.min(1),
  /** Where the version's weights are: under `<checkpoint.storage>/<run id>/`. */
  uri: storageUri,
});
export type PolicyBody = z.infer<typeof policyBody>;

export const rolloutPollQuery = z.strictObject({
  attempt: z.coerce.number().int().min(1).max(10_000),
  /** The trainer's current policy version: the one it last published, or 0. */
  policy_version: z.coerce.number().int().min(0).max(1_000_000_000),
  wait_s: z.coerce.number().int().min(0).max(ROLLOUT_POLL_MAX_WAIT_S).default(0),
  max: z.coerce.number().int().min(1).max(MAX_BATCHES_PER_POLL).default(MAX_BATCHES_PER_POLL),
});
export type RolloutPollQuery = z.infer<typeof rolloutPollQuery>;

export interface PublishedPolicy {
  version: number;
  uri: string | null;
}

export interface RolloutBatchAnswer {
  task_id: string;
  batch_id: string;
  duplicate: boolean;
  directive: (typeof DIRECTIVES)[number];
  /** The newest policy the trainer published: the rollout samples with it next. */
  policy: PublishedPolicy;
  /** The trainer finished the stage: the rollout task completes. */
  trainer_done: boolean;
}

export interface PolicyAnswer {
  task_id: string;
  duplicate: boolean;
  directive: (typeof DIRECTIVES)[number];
  policy: PublishedPolicy;
}

export interface RolloutPollAnswer {
  task_id: string;
  directive: (typeof DIRECTIVES)[number];
  /** Batches within the staleness bound, oldest first; each is handed over once. */
  batches: Array<{ batch_id: string; policy_version: number; staleness: number; samples: RolloutSample[]; dropped_groups: number }>;
  /** Batches judged too stale now: never handed over, counted in the run's rollout metrics. */
  rejected: Array<{ batch_id: string; policy_version: number; staleness: number }>;
}

/** A run's RLVR exchange, per stage attempt: what `GET /v1/runs/:id/rollouts` answers. */
export interface RolloutMetrics {
  attempts: Array<{
    stage: string;
    attempt: number;
    batches: number;
    pending: number;
    accepted: number;
    rejected: number;
    dropped_groups: number;
    policy_version: number;
    /** Batches by staleness (policy versions behind the trainer when judged), accepted and rejected. */
    staleness_histogram: Record<string, { accepted: number; rejected: number }>;
  }>;
}
