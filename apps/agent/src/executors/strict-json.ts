/**
 * Parses one JSON document from outside the agent (a trainer's stdout line, a task or trainer-config file) so that
 * it has one meaning: a duplicate key at any depth, a key that can reach a prototype (`__proto__`, `constructor`,
 * `prototype`) and nesting deeper than `maxDepth` are refused. Linear in the input: one scan for depth and keys
 * (every `:` outside a string follows a key), the platform's parser, one iterative walk that counts the keys that
 * survived; fewer survivors than keys written means a key was written twice. Failures name a reason, never the text.
 */
export type JsonRefusal = 'syntax' | 'duplicate_key' | 'forbidden_key' | 'too_deep';

export type JsonParse = { ok: true; value: unknown } | { ok: false; reason: JsonRefusal };

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export function parseStrictJson(text: string, maxDepth = 32): JsonParse {
  let depth = 0;
  let keys = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return { ok: false, reason: 'too_deep' };
    } else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x3a) keys++;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'syntax' };
  }
  let survived = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      pending.push(...node);
      continue;
    }
    for (const key of Object.keys(node)) {
      if (FORBIDDEN_KEYS.has(key)) return { ok: false, reason: 'forbidden_key' };
      survived++;
      pending.push((node as Record<string, unknown>)[key]);
    }
  }
  return survived === keys ? { ok: true, value } : { ok: false, reason: 'duplicate_key' };
}
