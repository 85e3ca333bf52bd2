import { z } from 'zod';
import type { JsonPathSegment } from './strict-json.js';

/**
 * Paths are shown in error messages, `details` and logs, so they must never carry the input's own text: a key
 * is printed only when it is one of the names the schema itself defines (its vocabulary). Any other key (an
 * unknown key, a record key the caller chose, a credential pasted as a key) appears by its position in its
 * object, `["<key #3>"]`, which still lets the author find it.
 */
export type Vocabulary = ReadonlySet<string>;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export function renderJsonPath(path: readonly JsonPathSegment[], vocabulary: Vocabulary): string {
  let out = '$';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (vocabulary.has(segment.key) && IDENTIFIER.test(segment.key)) out += `.${segment.key}`;
    else out += `["<key #${segment.position}>"]`;
  }
  return out;
}

/**
 * The positioned form of a validator's path (strings and numbers) through the input it describes. A key is
 * positioned by where it stands among its object's keys.
 */
export function positionPath(input: unknown, path: readonly PropertyKey[]): JsonPathSegment[] {
  const out: JsonPathSegment[] = [];
  let node: unknown = input;
  for (const step of path) {
    if (typeof step === 'number') {
      out.push(step);
      node = Array.isArray(node) ? node[step] : undefined;
      continue;
    }
    const key = String(step);
    const position = node !== null && typeof node === 'object' && !Array.isArray(node) ? Object.keys(node).indexOf(key) + 1 : 0;
    out.push({ key, position });
    node = position > 0 ? (node as Record<string, unknown>)[key] : undefined;
  }
  return out;
}

const vocabularies = new WeakMap<z.ZodType, Vocabulary>();

/**
 * Every property name and every enumerated record key a schema defines, read from its JSON Schema. Computed
 * once per schema.
 */
export function vocabularyOf(schema: z.ZodType): Vocabulary {
  const known = vocabularies.get(schema);
  if (known) return known;
  const names = new Set<string>();
  const pending: unknown[] = [];
  try {
    pending.push(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }));
  } catch {
    // A schema JSON Schema cannot describe gets no vocabulary: its keys are all shown by position.
  }
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) {
      pending.push(...node);
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    const record = node as Record<string, unknown>;
    if (record.properties && typeof record.properties === 'object') for (const name of Object.keys(record.properties)) names.add(name);
    const propertyNames = record.propertyNames as { enum?: unknown[] } | undefined;
    for (const name of propertyNames?.enum ?? []) if (typeof name === 'string') names.add(name);
    pending.push(...Object.values(record));
  }
  vocabularies.set(schema, names);
  return names;
}

/** An empty vocabulary: every key is shown by position. */
export const NO_VOCABULARY: Vocabulary = new Set();
