import { readFileSync, statSync } from 'node:fs';
import { parseStrictJson, STAGE_NAMES, stageKind, type StageName, type TaskSpec } from '@ito/contracts';
import { z } from 'zod';

/**
 * The operator's trainer configuration: which command runs a task, by the task's stage name, else its kind
 * (`train`, `post_train`, `eval`), else `default`. The command never comes from a task or a manifest: a manifest
 * can choose a recipe, never a program. Example:
 *
 *   { "trainers": {
 *       "default": { "argv": ["/usr/bin/node", "/opt/ito/agent/dist/trainers/reference-trainer.js"] },
 *       "eval": { "argv": ["/usr/bin/python3", "/opt/acme/eval.py"], "env": { "OMP_NUM_THREADS": "8" } } } }
 *
 * `env` is for non-secret settings only: names in the agent's own `ITO_` namespace and names that look like a
 * credential are refused, since the trainer's environment is written to no log but is readable by its processes.
 */
const NODE_STAGES = STAGE_NAMES.filter((s) => stageKind(s) !== 'data_prep' && stageKind(s) !== 'planning');
export const TRAINER_KEYS = [...NODE_STAGES, 'train', 'post_train', 'eval', 'ladder', 'default'] as const;

const noNul = (s: string) => !s.includes('\u0000');
const SECRET_LOOKING = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)/i;

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'an environment variable name')
  .refine((n) => !n.toUpperCase().startsWith('ITO_'), 'ITO_ names are the agent’s own')
  .refine((n) => !SECRET_LOOKING.test(n), 'looks like a secret: give a trainer its credentials another way');

const trainerSchema = z.strictObject({
  argv: z.array(z.string().min(1).max(4096).refine(noNul, 'contains NUL')).min(1).max(256),
  env: z
    .record(envName, z.string().max(4096).refine(noNul, 'contains NUL'))
    .refine((e) => Object.keys(e).length <= 64, 'at most 64 variables')
    .optional(),
});
export type TrainerCommand = z.infer<typeof trainerSchema>;

export const trainerConfigSchema = z.strictObject({
  trainers: z
    .partialRecord(z.enum(TRAINER_KEYS), trainerSchema)
    .refine((t) => Object.keys(t).length > 0, 'names at least one trainer'),
});
export type TrainerConfig = z.infer<typeof trainerConfigSchema>;

export class TrainerConfigError extends Error {
  override readonly name = 'TrainerConfigError';
}

const MAX_CONFIG_BYTES = 256 * 1024;
const KNOWN_NAMES = new Set<string>(['trainers', 'argv', 'env', ...TRAINER_KEYS]);

/**
 * Reads and validates the file, once, when the agent starts; errors name the file and the place in it, never a
 * value from it.
 */
export function loadTrainerConfig(path: string): TrainerConfig {
  let text: string;
  try {
    if (statSync(path).size > MAX_CONFIG_BYTES) throw new TrainerConfigError(`trainer config ${path}: larger than ${MAX_CONFIG_BYTES} bytes`);
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (err instanceof TrainerConfigError) throw err;
    throw new TrainerConfigError(`trainer config ${path}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return parseTrainerConfig(text, `trainer config ${path}`);
}

export function parseTrainerConfig(text: string, source = 'trainer config'): TrainerConfig {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) throw new TrainerConfigError(`${source}: not one JSON object (${parsed.error.reason.replace('_', ' ')})`);
  const result = trainerConfigSchema.safeParse(parsed.value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const where = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : KNOWN_NAMES.has(String(p)) ? `.${String(p)}` : '.<key>')).join('');
  const keyIssue = issue.code === 'invalid_key' ? issue.issues[0]?.message : undefined;
  const what = issue.code === 'unrecognized_keys' ? 'unknown key' : issue.code === 'invalid_key' ? `key not allowed: ${keyIssue ?? 'invalid'}` : issue.message;
  throw new TrainerConfigError(`${source}: ${where || 'top level'}: ${what}`);
}

/** The command for a task: by stage name, else by kind, else the default; null when none applies. */
export function trainerFor(config: TrainerConfig, spec: Pick<TaskSpec, 'stage' | 'kind'>): TrainerCommand | null {
  const t = config.trainers;
  return t[spec.stage as StageName] ?? t[spec.kind] ?? t.default ?? null;
}
