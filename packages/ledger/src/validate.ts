import { ItoError } from '@ito/contracts';
import { z } from 'zod';
import type { AppendOptions, NewEvent } from './types.js';

const id = z.string().min(1).max(200);

const newEventSchema = z.object({
  type: z.string().min(1).max(200),
  data: z.record(z.string(), z.unknown()),
  schemaVersion: z.number().int().min(1).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

const appendSchema = z.object({
  streamId: id,
  events: z.array(newEventSchema).min(1).max(10_000),
  tenantId: id,
  expectedVersion: z.union([z.literal('no_stream'), z.literal('any'), z.number().int().min(0)]),
});

/** Refuses a malformed append before it reaches the database, with the stable code validation_failed. */
export function validateAppend(streamId: string, events: readonly NewEvent[], opts: AppendOptions): void {
  const parsed = appendSchema.safeParse({ streamId, events, tenantId: opts?.tenantId, expectedVersion: opts?.expectedVersion });
  if (!parsed.success) {
    throw new ItoError('validation_failed', 'the append is malformed', {
      issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
}
