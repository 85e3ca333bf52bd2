import { describe, expect, it } from 'vitest';
import { manifestJsonSchema } from '@ito/contracts';

type Schema = Record<string, any>;

/** Every property schema of the document, with its JSON path, at any depth (through arrays, unions and records). */
function properties(schema: Schema, path = '$'): { path: string; schema: Schema }[] {
  const out: { path: string; schema: Schema }[] = [];
  for (const [name, child] of Object.entries<Schema>(schema.properties ?? {})) {
    out.push({ path: `${path}.${name}`, schema: child }, ...properties(child, `${path}.${name}`));
  }
  if (schema.items) out.push(...properties(schema.items, `${path}[]`));
  for (const branch of [...(schema.oneOf ?? []), ...(schema.anyOf ?? [])]) out.push(...properties(branch, path));
  if (typeof schema.additionalProperties === 'object') out.push(...properties(schema.additionalProperties, `${path}.*`));
  return out;
}

/** The constraints of a leaf that an example must meet: enough to catch an example that contradicts its field. */
function leafProblems(schema: Schema, value: unknown): string[] {
  const problems: string[] = [];
  const type = schema.type as string | undefined;
  if (type === 'integer' && !Number.isInteger(value)) problems.push('not an integer');
  if (type === 'number' && typeof value !== 'number') problems.push('not a number');
  if (type === 'string' && typeof value !== 'string') problems.push('not a string');
  if (type === 'boolean' && typeof value !== 'boolean') problems.push('not a boolean');
  if (schema.const !== undefined && value !== schema.const) problems.push('not the const');
  if (schema.enum && !schema.enum.includes(value)) problems.push('not in the enum');
  if (typeof value === 'string') {
    if (schema.pattern && !new RegExp(schema.pattern).test(value)) problems.push('does not match the pattern');
    if (schema.minLength !== undefined && value.length < schema.minLength) problems.push('too short');
    if (schema.maxLength !== undefined && value.length > schema.maxLength) problems.push('too long');
    if (schema.format === 'date-time' && Number.isNaN(Date.parse(value))) problems.push('not a date-time');
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) problems.push('below the minimum');
    if (schema.maximum !== undefined && value > schema.maximum) problems.push('above the maximum');
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) problems.push('not above the exclusive minimum');
  }
  return problems;
}

describe('the manifest JSON Schema served at /v1/schemas/manifest.json', () => {
  const schema = manifestJsonSchema();
  const all = properties(schema);

  it('describes every property at every depth', () => {
    expect(all.length).toBeGreaterThan(40);
    const undescribed = all.filter((p) => typeof p.schema.description !== 'string' || p.schema.description.length < 10).map((p) => p.path);
    expect(undescribed).toEqual([]);
    expect(schema.description).toMatch(/training manifest/);
  });

  it('gives every scalar field an example that meets the field’s own constraints, and states units and ranges', () => {
    const leaves = all.filter((p) => ['string', 'number', 'integer', 'boolean'].includes(p.schema.type));
    expect(leaves.length).toBeGreaterThan(30);
    const missing = leaves.filter((p) => !Array.isArray(p.schema.examples) || p.schema.examples.length === 0).map((p) => p.path);
    expect(missing).toEqual([]);
    const wrong = leaves.flatMap((p) => p.schema.examples.flatMap((e: unknown) => leafProblems(p.schema, e).map((why) => `${p.path}: ${why}`)));
    expect(wrong).toEqual([]);
    const byPath = Object.fromEntries(all.map((p) => [p.path, p.schema]));
    expect(byPath['$.budget.ceiling_usd']!.description).toMatch(/US dollars/);
    expect(byPath['$.target.sequence_length']!.description).toMatch(/tokens, 128 to 1048576/);
    expect(byPath['$.checkpoint.interval_minutes']!.description).toMatch(/Minutes .* 1 to 1440/);
  });
});
