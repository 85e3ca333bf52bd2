import { ItoError } from '@ito/contracts';
import type { JobDefinition } from './catalog.js';

/** Parses job data against its schema; the error names the job and the fields, never the values. */
export function parseJobData(name: string, def: JobDefinition, input: unknown): unknown {
  const parsed = def.schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  const where = issues.map((i) => i.path || '(root)').join(', ');
  return failInvalid(name, where, issues);
}

function failInvalid(name: string, where: string, issues: Array<{ path: string; message: string }>): never {
  throw new ItoError('validation_failed', `invalid data for job ${name}: ${where}`, { job: name, issues });
}
