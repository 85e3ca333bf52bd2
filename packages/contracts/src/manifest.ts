import { createHash } from 'node:crypto';
import { z } from 'zod';
import { describeIssues, type InputIssue } from './input-issues.js';
import { renderJsonPath, vocabularyOf, type Vocabulary } from './json-path.js';
import { CURRICULUM_STAGES } from './run-state.js';
import { parseStrictJson, type StrictJsonError } from './strict-json.js';

/**
 * The strict training manifest (CONTRACT.md, "The manifest"). Every object is strict: an unknown key is an
 * error, never silently dropped, because a reviewer approved these exact bytes and a key the server ignores
 * is a key the reviewer was misled by.
 */
export const MANIFEST_SCHEMA_ID = 'ito.train.manifest/v1';

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

const decontamination = z.strictObject({
  eval_suite: z.string().min(1).max(256),
  method: z.string().min(1).max(128),
  checked_at: isoInstant,
  report_ref: storageUri,
  report_sha256: sha256Hex,
  contaminated_fraction: z.number().min(0).max(1),
});

const dataSource = z.strictObject({
  ref: storageUri,
  sha256: sha256Hex,
  tokens: z.number().int().positive(),
  license: z.string().min(1).max(128),
  decontamination,
});

const curriculumStage = z.enum(CURRICULUM_STAGES);

const target = z
  .strictObject({
    objective: z.enum(['pretrain', 'continued_pretrain', 'mid_train', 'post_train_only']),
    tokens: z.number().int().positive(),
    sequence_length: z.number().int().min(128).max(1_048_576),
    curriculum: z.array(curriculumStage).min(1),
    long_context_length: z.number().int().min(128).max(4_194_304).optional(),
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
  });

const sftStage = z.strictObject({ stage: z.literal('sft'), data_ref: storageUri, epochs: z.number().int().min(1).max(100) });
const dpoStage = z.strictObject({ stage: z.literal('dpo'), data_ref: storageUri, beta: z.number().positive().max(10) });
const rlvrStage = z.strictObject({
  stage: z.literal('rlvr'),
  algorithm: z.literal('grpo'),
  dapo: z.boolean(),
  verifier: z.string().min(1).max(128),
  max_policy_staleness: z.number().int().min(0).max(64),
});
const POST_TRAINING_ORDER = ['sft', 'dpo', 'rlvr'] as const;

const postTraining = z.strictObject({
  recipe: z
    .array(z.discriminatedUnion('stage', [sftStage, dpoStage, rlvrStage]))
    .superRefine((recipe, ctx) => {
      const order = recipe.map((s) => POST_TRAINING_ORDER.indexOf(s.stage));
      if (order.some((v, i) => i > 0 && v <= order[i - 1]!)) {
        ctx.addIssue({ code: 'custom', message: 'stages must be unique and in the order sft → dpo → rlvr' });
      }
    }),
});

const gateBound = z
  .strictObject({ min: z.number().optional(), max: z.number().optional() })
  .refine((b) => b.min !== undefined || b.max !== undefined, 'a gate needs min or max')
  .refine((b) => b.min === undefined || b.max === undefined || b.min <= b.max, 'min must not exceed max');
const metricName = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/);

const evalSpec = z.strictObject({
  battery: z.string().min(1).max(256),
  gates: z.partialRecord(curriculumStage, z.record(metricName, gateBound)),
});

const checkpoint = z.strictObject({
  storage: storageUri,
  interval_minutes: z.number().int().min(1).max(1440),
  keep_last: z.number().int().min(1).max(1000),
  async: z.boolean(),
});

const budget = z.strictObject({
  ceiling_usd: z.number().positive(),
  max_incremental_cost_usd: z.number().min(0),
});

export const manifestSchema = z
  .strictObject({
    schema: z.literal(MANIFEST_SCHEMA_ID),
    name: slug.optional(),
    model: z.strictObject({
      family: slug,
      parameters: parameterCount,
      revision: z.string().min(1).max(512),
      init: z.enum(['pretrained', 'scratch']).default('pretrained'),
    }),
    data: z.array(dataSource).min(1).max(256),
    target,
    post_training: postTraining,
    eval: evalSpec,
    checkpoint,
    budget,
  })
  .superRefine((m, ctx) => {
    for (const stage of Object.keys(m.eval.gates)) {
      if (!m.target.curriculum.includes(stage as (typeof CURRICULUM_STAGES)[number])) {
        ctx.addIssue({ code: 'custom', path: ['eval', 'gates', stage], message: 'a gate for a stage the curriculum does not run' });
      }
    }
    if (m.target.curriculum.includes('post_training') && m.post_training.recipe.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['post_training', 'recipe'], message: 'the curriculum has post_training but the recipe is empty' });
    }
  });

export type Manifest = z.output<typeof manifestSchema>;

/** SHA-256 over the exact bytes, lower-case hex, prefixed `sha256:` (CONTRACT.md). */
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
