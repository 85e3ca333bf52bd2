import type { z } from 'zod';
import { positionPath, renderJsonPath, type Vocabulary } from './json-path.js';

/** One reason an input was refused: where (a path safe to show) and what, never the input's own text. */
export interface InputIssue {
  path: string;
  message: string;
}

export const UNKNOWN_KEY_MESSAGE = 'unknown key: unknown keys are rejected (the key itself is not repeated here)';

/**
 * The validator's issues, made safe to show. Its own message for an unknown key quotes the key, and a key can be
 * anything the caller typed (a credential pasted as a key included), so an unknown key is reported by its
 * position instead; every path is rendered through the schema's vocabulary. The other messages state what was
 * expected, never what was received.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], input: unknown, vocabulary: Vocabulary, limit = 50): InputIssue[] {
  const out: InputIssue[] = [];
  for (const issue of issues) {
    if (out.length >= limit) break;
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys.slice(0, limit - out.length)) {
        out.push({ path: renderJsonPath(positionPath(input, [...issue.path, key]), vocabulary), message: UNKNOWN_KEY_MESSAGE });
      }
      continue;
    }
    out.push({ path: renderJsonPath(positionPath(input, issue.path), vocabulary), message: issue.message });
  }
  return out;
}
