import type { z } from 'zod';
import { positionPath, renderJsonPath, type Vocabulary } from './json-path.js';
import { nearestName } from './near-name.js';

/** One reason an input was refused: where (a path safe to show) and what, never the input's own text. */
export interface InputIssue {
  path: string;
  message: string;
}

export const UNKNOWN_KEY_MESSAGE = 'unknown key: unknown keys are rejected (the key itself is not repeated here)';

/** The only shape of unknown key that is ever named: a short lowercase identifier, like the schema's own names. */
const NAMEABLE_KEY = /^[a-z][a-z0-9_]{0,39}$/;

/**
 * An unknown key within a typo of one of the schema's names (`epoch` for `epochs`) is named, with the name meant:
 * being that close to a public name, it carries nothing of its own worth hiding. Any other key stays unnamed.
 */
export function unknownKeyMessage(key: string, vocabulary: Vocabulary): string {
  const near = NAMEABLE_KEY.test(key) ? nearestName(key, vocabulary) : null;
  return near ? `unknown key "${key}": did you mean "${near}"?` : UNKNOWN_KEY_MESSAGE;
}

/**
 * The validator's issues, made safe to show. Its own message for an unknown key quotes the key, and a key can be
 * anything the caller typed (a credential pasted as a key included), so an unknown key is reported by its
 * position instead; every path is rendered through the schema's vocabulary. The other messages state what was
 * expected, never what was received.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], input: unknown, vocabulary: Vocabulary, limit = 50): InputIssue[] {
  const named: InputIssue[] = [];
  const out: InputIssue[] = [];
  for (const issue of issues) {
    if (named.length + out.length >= limit) break;
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys.slice(0, limit - named.length - out.length)) {
        const message = unknownKeyMessage(key, vocabulary);
        (message === UNKNOWN_KEY_MESSAGE ? out : named).push({ path: renderJsonPath(positionPath(input, [...issue.path, key]), vocabulary), message });
      }
      continue;
    }
    out.push({ path: renderJsonPath(positionPath(input, issue.path), vocabulary), message: issue.message });
  }
  // A typo first: `epoch` for `epochs` also leaves `epochs` missing, and the typo is what the author must fix.
  return [...named, ...out];
}
