import { createHash } from 'node:crypto';
import { z } from 'zod';
import { describeIssues, type InputIssue } from './input-issues.js';
import { renderJsonPath, vocabularyOf, type Vocabulary } from './json-path.js';
import { CURRICULUM_STAGES } from './run-state.js';
import { dpoStep, rlvrStep, sftStep } from './post-training.js';
import { GATED_STAGES } from './stages.js';
import { parseStrictJson, type StrictJsonError } from './strict-json.js';

/**
 * The strict training manifest (docs/contract.md, "The manifest"). Every object is strict: an unknown key is an
 * error, never silently dropped, because a reviewer approved these exact bytes and a key the server ignores
 * is a key the reviewer was misled by.
 */
export const MANIFEST_SCHEMA_ID = 'ito.train.manifest/v1';

/**
 * Every field carries its description (units, ranges) and an example, so the JSON Schema served at
 * /v1/schemas/manifest.json is enough to write a manifest from. The examples are the repository's example manifest.
 */
const field = <T extends z.ZodType>(schema: T, description: string, example?: unknown): T =>
  schema.meta(example === undefined ? { description } : { description, examples: [example] });

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex characters');
const storageUri = z
  .string()
  .min(1)
  .max(2048)
  .regex(/^[a-z][a-z0-9+.-]*:\/\/[^\s]+$/, 'expected a URI such as s3://bucket/prefix/');
const isoInstant = z.iso.datetime({ offset: true });
const slug = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,127}$/, 'expected a lower-case name of letters, digits, . _ -');

/** Parameter counts written the way model cards write them: 8B, 70B, 1.5B, 150M, 1T. */
export const parameterCount = z.string().regex(/^\d+(\.\d+)?[MBT]$/, 'expected a count such as 150M, 8B or 1.5T');

export function parseParameterCount(text: string): number {
  const unit = text.slice(-1);
  const scale = unit === 'M' ? 1e6 : unit === 'B' ? 1e9 : 1e12;
  return Number(text.slice(0, -1)) * scale;
}

const decontamination = field(
  z.strictObject({
    eval_suite: field(z.string().min(1).max(256), 'The eval suite the data was checked against, 1 to 256 characters; it must be this manifest\'s eval.battery.', 'ito-evals/v1'),
    method: field(z.string().min(1).max(128), 'How overlap was measured, 1 to 128 characters.', '13-gram-overlap'),
    checked_at: field(isoInstant, 'When the check ran: an ISO 8601 instant with Z or an offset.', '2026-11-20T12:00:00Z'),
    report_ref: field(storageUri, 'Where the check\'s report is: a storage URI (scheme://location), at most 2048 characters.', 's3://acme-training-data/code-mix/v3/decontamination.json'),
    report_sha256: field(sha256Hex, 'SHA-256 of the report, 64 lower-case hex characters.', '1b3d5f7e9a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a7c9e1b3d5f7a9c1e3b'),
    contaminated_fraction: field(z.number().min(0).max(1), 'Fraction of this source found to overlap the eval suite, 0 to 1; the tenant policy sets the largest allowed (0.001 by default).', 0.0004),
  }),
  'Provenance of the decontamination check of this source against the eval battery.',
);

const dataSource = z.strictObject({
  ref: field(storageUri, 'Where the data is: a storage URI (scheme://location), at most 2048 characters.', 's3://acme-training-data/code-mix/v3/'),
  sha256: field(sha256Hex, 'SHA-256 of the data snapshot, 64 lower-case hex characters.', '9f2c4e1a7b3d5f6e8a0c2b4d6f8e0a1c3b5d7f9e1a3c5b7d9f1e3a5c7b9d1f3e'),
  tokens: field(z.number().int().positive(), 'Tokens in this source: a positive integer count.', 40000000000),
  license: field(z.string().min(1).max(128), 'The license the data is used under, 1 to 128 characters; it must be one the tenant policy allows.', 'cc-by-4.0'),
  origin: field(
    z.enum(['custom', 'reference']),
    'Where the mix comes from: custom (the tenant\'s own mix, which must pass the 150M-ladder pre-check against the reference mix before any large stage) or reference (a mix already validated). Default reference.',
    'reference',
  ).optional(),
  decontamination,
});

const curriculumStage = z.enum(CURRICULUM_STAGES);

const target = field(
  z
    .strictObject({
      objective: field(
        z.enum(['pretrain', 'continued_pretrain', 'mid_train', 'post_train_only']),
        'What the run is for: pretrain from scratch, continued_pretrain of the given revision, mid_train, or post_train_only.',
        'continued_pretrain',
      ),
      tokens: field(z.number().int().positive(), 'Training tokens to process: a positive integer count; with the planned throughput it sets the hours and the cost.', 42000000000),
      sequence_length: field(z.number().int().min(128).max(1_048_576), 'Training context length in tokens, 128 to 1048576.', 8192),
      curriculum: field(
        z.array(curriculumStage).min(1),
        `The stages to run, at least one, each once and in the order ${CURRICULUM_STAGES.join(' → ')}.`,
        ['pretrain', 'mid_train', 'long_context', 'post_training'],
      ),
      long_context_length: field(
        z.number().int().min(128).max(4_194_304),
        'Context length in tokens of the long_context stage, 128 to 4194304 and larger than sequence_length; required when the curriculum has long_context.',
        65536,
      ).optional(),
    })
    .superRefine((t, ctx) => {
      const order = t.curriculum.map((s) => CURRICULUM_STAGES.indexOf(s));
      if (order.some((v, i) => i > 0 && v <= order[i - 1]!)) {
        ctx.addIssue({ code: 'custom', path: ['curriculum'], message: `stages must be unique and in the order ${CURRICULUM_STAGES.join(' → ')}` });
      }
      if (t.curriculum.includes('long_context')) {
        if (t.long_context_length === undefined) {
          ctx.addIssue({ code: 'custom', path: ['long_context_length'], message: 'required when the curriculum has long_context' });
        } else if (t.long_context_length <= t.sequence_length) {
          ctx.addIssue({ code: 'custom', path: ['long_context_length'], message: 'must exceed sequence_length' });
        }
      }
    }),
  'What to train for, on how many tokens, at what context length, through which stages.',
);

const POST_TRAINING_ORDER = ['sft', 'dpo', 'rlvr'] as const;

const postTraining = field(
  z.strictObject({
    recipe: field(
      z
        .array(z.discriminatedUnion('stage', [sftStep, dpoStep, rlvrStep]))
        .superRefine((recipe, ctx) => {
          const order = recipe.map((s) => POST_TRAINING_ORDER.indexOf(s.stage));
          if (order.some((v, i) => i > 0 && v <= order[i - 1]!)) {
            ctx.addIssue({ code: 'custom', message: 'stages must be unique and in the order sft → dpo → rlvr' });
          }
        }),
      'Post-training stages, each at most once and in the order sft → dpo → rlvr; not empty when the curriculum has post_training.',
    ),
  }),
  'What runs in the post_training stage.',
);

const gateBound = field(
  z
    .strictObject({
      min: field(z.number(), 'Lowest accepted value, in the metric\'s own unit.', 0.55).optional(),
      max: field(z.number(), 'Highest accepted value, in the metric\'s own unit.', 2.1).optional(),
    })
    .refine((b) => b.min !== undefined || b.max !== undefined, 'a gate needs min or max')
    .refine((b) => b.min === undefined || b.max === undefined || b.min <= b.max, 'min must not exceed max'),
  'The bounds one metric must meet: min, max or both (min not above max).',
);
const metricName = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/);

const evalSpec = field(
  z.strictObject({
    battery: field(z.string().min(1).max(256), 'The fixed eval battery run after each stage, by name and version, 1 to 256 characters.', 'ito-evals/v1'),
    gates: field(
      z.partialRecord(z.enum(GATED_STAGES), z.record(metricName, gateBound)),
      'Per curriculum stage the run has (and per post-training step of its recipe, evaluated right after that step), the metrics (lower-case names) a stage must meet; a stage that misses one fails the run, and no one can override it.',
      { pretrain: { heldout_loss: { max: 2.1 } }, mid_train: { mmlu: { min: 0.55 } } },
    ),
  }),
  'The eval battery and the gates between stages.',
);

const checkpoint = field(
  z.strictObject({
    storage: field(storageUri, 'Where checkpoints are written: a storage URI of a scheme (and prefix) the tenant policy allows.', 's3://acme-checkpoints/code-8b-cpt/'),
    interval_minutes: field(z.number().int().min(1).max(1440), 'Minutes between checkpoints, 1 to 1440.', 30),
    keep_last: field(z.number().int().min(1).max(1000), 'Checkpoints kept, 1 to 1000; older ones are deleted. Each kept checkpoint adds storage cost.', 3),
    async: field(z.boolean(), 'Write checkpoints in the background instead of pausing training.', true),
  }),
  'How often and where checkpoints are saved; a lost node resumes from the last good one.',
);

const budget = field(
  z.strictObject({
    ceiling_usd: field(z.number().positive(), 'Most the run may cost in US dollars (booked GPU-hours at the booking rate), greater than 0.', 60000),
    max_incremental_cost_usd: field(
      z.number().min(0),
      'Most the run may add in US dollars beyond the booking (checkpoint storage and final egress), 0 or more.',
      4000,
    ),
  }),
  'Spending limits checked before the run starts (budget_exceeded, incremental_cost_exceeded).',
);

export const manifestSchema = z
  .strictObject({
    schema: field(z.literal(MANIFEST_SCHEMA_ID), `The manifest format and version: always "${MANIFEST_SCHEMA_ID}".`, MANIFEST_SCHEMA_ID),
    name: field(slug, 'A name for people: 1 to 128 lower-case letters, digits, ".", "_" or "-".', 'acme-code-8b-cpt').optional(),
    model: field(
      z.strictObject({
        family: field(slug, 'The model family (architecture), lower-case; the planner reads the model\'s shape from it.', 'llama'),
        parameters: field(parameterCount, 'Parameter count as model cards write it: a number and M (millions), B (billions) or T (trillions).', '8B'),
        revision: field(z.string().min(1).max(512), 'The exact weights to start from, 1 to 512 characters: a repository and a commit.', 'meta-llama/Llama-3.1-8B@d04e592bb4f6aa9cfee91e2e20afa771667e1d4b'),
        init: field(z.enum(['pretrained', 'scratch']), 'pretrained starts from the revision\'s weights; scratch initialises at random. Default pretrained.', 'pretrained').default('pretrained'),
      }),
      'The model to train.',
    ),
    data: field(z.array(dataSource).min(1).max(256), 'The training data, 1 to 256 sources, each pinned by digest, licensed and checked for contamination.'),
    target,
    post_training: postTraining,
    eval: evalSpec,
    checkpoint,
    budget,
  })
  .superRefine((m, ctx) => {
    const runs = new Set<string>([...m.target.curriculum, ...(m.target.curriculum.includes('post_training') ? m.post_training.recipe.map((s) => s.stage) : [])]);
    for (const stage of Object.keys(m.eval.gates)) {
      if (!runs.has(stage)) {
        ctx.addIssue({ code: 'custom', path: ['eval', 'gates', stage], message: 'a gate for a stage the curriculum does not run' });
      }
    }
    if (m.target.curriculum.includes('post_training') && m.post_training.recipe.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['post_training', 'recipe'], message: 'the curriculum has post_training but the recipe is empty' });
    }
  })
  .meta({ title: 'Itô training manifest', description: 'A training manifest: what to train, on what data, through which stages and gates, within what budget.' });

export type Manifest = z.output<typeof manifestSchema>;

/** SHA-256 over the exact bytes, lower-case hex, prefixed `sha256:` (docs/contract.md). */
export function manifestDigest(bytes: Uint8Array | string): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

export const manifestDigestSchema = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'expected sha256: and 64 lower-case hex characters');

/** JSON Schema (draft 2020-12) of the manifest, for editors and reviewers. */
export function manifestJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(manifestSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}

export type ManifestIssue = InputIssue;

export type ManifestCheck = { ok: true; manifest: Manifest } | { ok: false; issues: ManifestIssue[] };

/** The names the manifest schema defines: the only keys an error message may print. */
export function manifestVocabulary(): Vocabulary {
  return vocabularyOf(manifestSchema);
}

/** Checks an already parsed manifest against the strict schema; issues carry safe paths. */
export function checkManifestValue(value: unknown): ManifestCheck {
  const result = manifestSchema.safeParse(value);
  if (result.success) return { ok: true, manifest: result.data };
  return { ok: false, issues: describeIssues(result.error.issues, value, manifestVocabulary()) };
}

/** The strict parser's refusal as a manifest issue: line, column and a safe path. */
export function jsonFailureIssue(error: StrictJsonError): ManifestIssue {
  return { path: renderJsonPath(error.path, manifestVocabulary()), message: `not accepted as JSON: ${error.message}` };
}

/**
 * Parses manifest text with the strict parser (one meaning: no duplicate or prototype keys, bounded depth),
 * then the strict schema; a failure lists every issue with its JSON path.
 */
export function parseManifest(text: string): ManifestCheck {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) return { ok: false, issues: [jsonFailureIssue(parsed.error)] };
  return checkManifestValue(parsed.value);
}
