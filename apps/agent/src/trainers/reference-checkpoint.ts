import { parseStrictJson, runIdSchema, STAGE_NAMES } from '@ito/contracts';
import { z } from 'zod';
import type { AdamState } from './adam.js';
import { PARAMETER_COUNT } from './tiny-model.js';
import type { RandomState } from './random.js';

/**
 * What the reference trainer saves: everything a restored run needs to continue exactly where it stopped: the
 * weights, the optimizer's moments and step, the data stream's generator state and position, and the step. One
 * JSON object per checkpoint; numbers round-trip exactly through JSON, so a restore is bit-identical.
 */
export const REFERENCE_CHECKPOINT_FORMAT = 'ito.reference-checkpoint/v1';

const vector = z.array(z.number().finite()).length(PARAMETER_COUNT);
const u32 = z.number().int().min(0).max(0xffffffff);

export const referenceCheckpointSchema = z.strictObject({
  format: z.literal(REFERENCE_CHECKPOINT_FORMAT),
  run_id: runIdSchema,
  stage: z.enum(STAGE_NAMES),
  step: z.number().int().min(0),
  /** Batches drawn from the data stream so far (more than `step` after a skip). */
  batch_index: z.number().int().min(0),
  parameters: vector,
  adam: z.strictObject({ t: z.number().int().min(0), m: vector, v: vector }),
  rng: z.tuple([u32, u32, u32, u32]),
});
export type ReferenceCheckpoint = z.infer<typeof referenceCheckpointSchema>;

export interface TrainingState {
  step: number;
  batchIndex: number;
  parameters: Float64Array;
  adam: AdamState;
  rng: RandomState;
}

export function encodeCheckpoint(runId: string, stage: ReferenceCheckpoint['stage'], s: TrainingState): Buffer {
  const checkpoint: ReferenceCheckpoint = {
    format: REFERENCE_CHECKPOINT_FORMAT,
    run_id: runId,
    stage,
    step: s.step,
    batch_index: s.batchIndex,
    parameters: [...s.parameters],
    adam: { t: s.adam.t, m: [...s.adam.m], v: [...s.adam.v] },
    rng: s.rng,
  };
  return Buffer.from(`${JSON.stringify(checkpoint)}\n`);
}

export function decodeCheckpoint(bytes: Buffer): ReferenceCheckpoint {
  const json = parseStrictJson(bytes.toString('utf8'));
  if (!json.ok) throw new Error(`checkpoint is not one JSON object (${json.error.reason})`);
  const parsed = referenceCheckpointSchema.safeParse(json.value);
  if (!parsed.success) throw new Error('checkpoint is not a reference-trainer checkpoint of this version');
  return parsed.data;
}
