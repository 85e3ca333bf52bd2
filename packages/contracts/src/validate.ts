import type { z } from 'zod';
import { ItoError } from './envelope.js';
import { describeIssues } from './input-issues.js';
import { vocabularyOf } from './json-path.js';

/**
 * Parses an outside input with its schema; a failure is `validation_failed` naming the first bad path. Issues
 * never repeat the input: unknown keys are reported by position and paths print only the schema's own names.
 */
export function validate<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = describeIssues(result.error.issues, value, vocabularyOf(schema), 20);
  const first = issues[0]!;
  throw new ItoError('validation_failed', `${what}: ${first.path}: ${first.message}`, { issues });
}
