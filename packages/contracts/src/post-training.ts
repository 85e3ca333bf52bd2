import { z } from 'zod';

/**
 * The post-training recipe's steps (docs/contract.md, "The manifest"): SFT, DPO against a frozen reference
 * policy, and RLVR with GRPO and the DAPO changes as named options. Every option is flat (a string, number or
 * boolean) because a step's options travel unchanged into every task's spec. Options left out take the values
 * `rlvrSettings` states, so a reviewer can see what a short recipe means.
 */
const field = <T extends z.ZodType>(schema: T, description: string, example?: unknown): T =>
  schema.meta(example === undefined ? { description } : { description, examples: [example] });

const storageUri = z
  .string()
  .min(1)
  .max(2048)
  .regex(/^[a-z][a-z0-9+.-]*:\/\/[^\s]+$/, 'expected a URI such as s3://bucket/prefix/');
const learningRate = field(z.number().positive().max(1), 'Optimizer learning rate, greater than 0 and at most 1.', 0.00002);
const batchSize = field(z.number().int().min(1).max(65_536), 'Sequences (SFT), pairs (DPO) or prompts (RLVR) per optimizer step, 1 to 65536.', 64);

export const sftStep = z.strictObject({
  stage: field(z.literal('sft'), 'Supervised fine-tuning.', 'sft'),
  data_ref: field(storageUri, 'Instruction data for SFT: a storage URI.', 's3://acme-training-data/instructions/v2/'),
  epochs: field(z.number().int().min(1).max(100), 'Passes over the SFT data, 1 to 100.', 2),
  learning_rate: learningRate.optional(),
  batch_size: batchSize.optional(),
});

/** `previous_stage`: the weights the DPO step starts from (the SFT policy), frozen. */
export const DPO_REFERENCE_PREVIOUS = 'previous_stage';

export const dpoStep = z.strictObject({
  stage: field(z.literal('dpo'), 'Direct preference optimisation.', 'dpo'),
  data_ref: field(storageUri, 'Preference pairs for DPO: a storage URI.', 's3://acme-training-data/preferences/v1/'),
  beta: field(z.number().positive().max(10), 'DPO temperature β (dimensionless), greater than 0 and at most 10.', 0.1),
  reference_policy: field(
    z.union([z.literal(DPO_REFERENCE_PREVIOUS), storageUri]),
    `The frozen reference policy: "${DPO_REFERENCE_PREVIOUS}" (the weights DPO starts from, by default) or a checkpoint's storage URI.`,
    DPO_REFERENCE_PREVIOUS,
  ).optional(),
  learning_rate: learningRate.optional(),
  batch_size: batchSize.optional(),
});

export const ROLLOUT_SEPARATION = ['required', 'preferred', 'colocated'] as const;
export type RolloutSeparation = (typeof ROLLOUT_SEPARATION)[number];

const epsilon = (what: string, example: number) => field(z.number().positive().max(1), `${what}, greater than 0 and at most 1.`, example);
const tokens = (what: string, example: number) => field(z.number().int().min(1).max(1_048_576), `${what}, 1 to 1048576 tokens.`, example);

export const rlvrStep = z
  .strictObject({
    stage: field(z.literal('rlvr'), 'Reinforcement learning from verifiable rewards.', 'rlvr'),
    algorithm: field(z.literal('grpo'), 'The policy optimisation: grpo (group relative policy optimisation), the one supported.', 'grpo'),
    dapo: field(z.boolean(), 'Apply the DAPO changes to GRPO; each can also be set on its own (clip_eps_high, dynamic_sampling, token_level_loss, overlong_shaping).', true),
    verifier: field(z.string().min(1).max(128), 'The reward verifier, by name, 1 to 128 characters.', 'unit-tests'),
    max_policy_staleness: field(z.number().int().min(0).max(64), 'Oldest rollout accepted, in policy versions behind the trainer, 0 to 64.', 2),
    group_size: field(z.number().int().min(2).max(256), 'Completions sampled per prompt, whose rewards are compared with each other, 2 to 256; default 8.', 8).optional(),
    kl_weight: field(z.number().min(0).max(10), 'Weight of the KL penalty to the reference policy, 0 to 10; 0 or absent: no KL term and no reference forward.', 0).optional(),
    clip_eps_low: epsilon('Lower clip range ε_low of the importance ratio (1 − ε_low); default 0.2', 0.2).optional(),
    clip_eps_high: epsilon('Upper clip range ε_high (1 + ε_high), at least ε_low; default 0.28 with dapo (clip-higher), else ε_low', 0.28).optional(),
    dynamic_sampling: field(z.boolean(), 'Drop prompt groups whose rewards are all equal (no signal) and sample more; default dapo.', true).optional(),
    token_level_loss: field(z.boolean(), 'Average the loss over tokens rather than over sequences; default dapo.', true).optional(),
    overlong_shaping: field(z.boolean(), 'Penalise completions in the last overlong_buffer_tokens before max_response_tokens, and truncated ones fully; default dapo.', true).optional(),
    max_response_tokens: tokens('Longest completion sampled; at most the target sequence length; default 4096', 4096).optional(),
    overlong_buffer_tokens: tokens('Soft-penalty zone before max_response_tokens, smaller than it; default max_response_tokens / 4', 1024).optional(),
    separation: field(
      z.enum(ROLLOUT_SEPARATION),
      'Trainer and rollout placement: required (separate nodes, or the plan is refused), preferred (separate when the booking has 2 nodes or more; default), colocated (the same nodes).',
      'preferred',
    ).optional(),
    rollout_nodes: field(z.number().int().min(1).max(4095), 'Nodes given to rollout when separated, fewer than the booking has; default half, rounded down.', 1).optional(),
  })
  .superRefine((s, ctx) => {
    const low = s.clip_eps_low ?? 0.2;
    if (s.clip_eps_high !== undefined && s.clip_eps_high < low) ctx.addIssue({ code: 'custom', path: ['clip_eps_high'], message: 'must be at least clip_eps_low' });
    const max = s.max_response_tokens ?? 4096;
    if (s.overlong_buffer_tokens !== undefined && s.overlong_buffer_tokens >= max) ctx.addIssue({ code: 'custom', path: ['overlong_buffer_tokens'], message: 'must be smaller than max_response_tokens' });
    const dapoOn = (v: boolean | undefined) => v ?? s.dapo;
    if (!dapoOn(s.overlong_shaping) && s.overlong_buffer_tokens !== undefined) ctx.addIssue({ code: 'custom', path: ['overlong_buffer_tokens'], message: 'only with overlong_shaping' });
    if (s.separation === 'colocated' && s.rollout_nodes !== undefined) ctx.addIssue({ code: 'custom', path: ['rollout_nodes'], message: 'only when trainer and rollout are separated' });
  });

export type SftStep = z.output<typeof sftStep>;
export type DpoStep = z.output<typeof dpoStep>;
export type RlvrStep = z.output<typeof rlvrStep>;

/** RLVR's options with every default filled in: what the trainer and rollout tasks do. */
export interface RlvrSettings {
  algorithm: 'grpo';
  verifier: string;
  max_policy_staleness: number;
  group_size: number;
  kl_weight: number;
  clip_eps_low: number;
  clip_eps_high: number;
  dynamic_sampling: boolean;
  token_level_loss: boolean;
  overlong_shaping: boolean;
  max_response_tokens: number;
  overlong_buffer_tokens: number;
  separation: RolloutSeparation;
}

export function rlvrSettings(s: RlvrStep): RlvrSettings {
  const low = s.clip_eps_low ?? 0.2;
  const max = s.max_response_tokens ?? 4096;
  return {
    algorithm: s.algorithm,
    verifier: s.verifier,
    max_policy_staleness: s.max_policy_staleness,
    group_size: s.group_size ?? 8,
    kl_weight: s.kl_weight ?? 0,
    clip_eps_low: low,
    clip_eps_high: s.clip_eps_high ?? (s.dapo ? Math.max(low, 0.28) : low),
    dynamic_sampling: s.dynamic_sampling ?? s.dapo,
    token_level_loss: s.token_level_loss ?? s.dapo,
    overlong_shaping: s.overlong_shaping ?? s.dapo,
    max_response_tokens: max,
    overlong_buffer_tokens: s.overlong_buffer_tokens ?? Math.max(1, Math.floor(max / 4)),
    separation: s.separation ?? 'preferred',
  };
}
