import type { z } from 'zod';
import { ItoError, jsonPath } from '@ito/contracts';

/** Parses an outside input with its schema; a failure is `validation_failed` naming the first bad path. */
export function validate<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw new ItoError('validation_failed', `${what}: ${jsonPath(issue.path)}: ${issue.message}`, {
    issues: result.error.issues.slice(0, 20).map((i) => ({ path: jsonPath(i.path), message: i.message })),
  });
}
