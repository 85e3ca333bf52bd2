import { parseStrictJson, runIdSchema, STAGE_NAMES } from '@ito/contracts';
import { driverFor } from '@ito/storage';
import { z } from 'zod';
import type { AdamState } from '../adam.js';
import { POLICY_SIZE } from './policy.js';

/**
 * The post-training policy as stored: checkpoints of SFT, DPO and RLVR, and the policy versions RLVR's trainer
 * publishes for its rollout workers. JSON, so numbers round-trip exactly.
 */
export const POLICY_FORMAT = 'ito.reference-policy/v1';

const vector = z.array(z.number().finite()).length(POLICY_SIZE);
const policySchema = z.strictObject({
  format: z.literal(POLICY_FORMAT),
  run_id: runIdSchema,
  stage: z.enum(STAGE_NAMES),
  step: z.number().int().min(0),
  version: z.number().int().min(0),
  weights: vector,
  adam: z.strictObject({ t: z.number().int().min(0), m: vector, v: vector }).nullable(),
});
export type StoredPolicy = z.infer<typeof policySchema>;

export function encodePolicy(p: { run_id: string; stage: StoredPolicy['stage']; step: number; version: number; weights: Float64Array; adam: AdamState | null }): Buffer {
  const stored: StoredPolicy = {
    format: POLICY_FORMAT,
    run_id: p.run_id,
    stage: p.stage,
    step: p.step,
    version: p.version,
    weights: [...p.weights],
    adam: p.adam ? { t: p.adam.t, m: [...p.adam.m], v: [...p.adam.v] } : null,
  };
  return Buffer.from(`${JSON.stringify(stored)}\n`);
}

/** Reads a stored policy; null when the object is not one (for example the network of a pretraining stage). */
export async function readPolicy(uri: string): Promise<StoredPolicy | null> {
  const json = parseStrictJson((await driverFor(uri).read(uri)).toString('utf8'));
  if (!json.ok) return null;
  const parsed = policySchema.safeParse(json.value);
  return parsed.success ? parsed.data : null;
}

export async function writePolicy(uri: string, bytes: Buffer): Promise<void> {
  await driverFor(uri).write(uri, bytes);
}

export async function removePolicy(uri: string): Promise<void> {
  await driverFor(uri).remove(uri);
}
