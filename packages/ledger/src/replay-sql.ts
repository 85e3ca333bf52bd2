import { createRequire } from 'node:module';

/**
 * Statement text for the replay's deferred writes (replay-writes.ts): a parameterised statement with its values
 * written in as quoted literals, so that many statements can travel in one round trip. Each value becomes
 * exactly the text the driver would have sent as a parameter (its own `prepareValue`), quoted with the driver's
 * `escapeLiteral`; an untyped quoted literal is resolved by PostgreSQL from its context as an untyped parameter
 * is. Anything this cannot render faithfully (binary values, text it cannot tokenise) answers null, and the
 * statement is then sent on its own as it was.
 */
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue(v: unknown): unknown };

export type Quote = (text: string) => string;

export function literalOf(value: unknown, quote: Quote): string | null {
  const prepared = prepareValue(value);
  if (prepared === null) return 'NULL';
  return typeof prepared === 'string' ? quote(prepared) : null;
}

/** Writes the literals in for $1…$n outside quotes, quoted identifiers, dollar-quoted bodies and comments. */
export function inlineParameters(text: string, literals: readonly string[]): string | null {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const skip = skippedSpan(text, i);
    if (skip === null) return null;
    if (skip > i) {
      out += text.slice(i, skip);
      i = skip;
      continue;
    }
    if (c === '$' && !/[\w$]/.test(text[i - 1] ?? ' ')) {
      const m = /^\$(\d+)/.exec(text.slice(i, i + 12));
      if (m) {
        const literal = literals[Number(m[1]) - 1];
        if (literal === undefined) return null;
        out += literal;
        i += m[0].length;
        continue;
      }
    }
    out += c;
    i += 1;
  }
  return out;
}

/** The end of a quoted string, quoted identifier, dollar-quoted body or comment starting at i; i if none; null if unterminated. */
function skippedSpan(text: string, i: number): number | null {
  const c = text[i]!;
  const next = text[i + 1];
  if (c === "'") {
    const backslashes = /[eE]/.test(text[i - 1] ?? '') && !/[\w$]/.test(text[i - 2] ?? ' ');
    for (let j = i + 1; j < text.length; j++) {
      if (backslashes && text[j] === '\\') j += 1;
      else if (text[j] === "'") {
        if (text[j + 1] === "'") j += 1;
        else return j + 1;
      }
    }
    return null;
  }
  if (c === '"') {
    const end = text.indexOf('"', i + 1);
    return end < 0 ? null : end + 1;
  }
  if (c === '-' && next === '-') {
    const end = text.indexOf('\n', i);
    return end < 0 ? text.length : end + 1;
  }
  if (c === '/' && next === '*') {
    const end = text.indexOf('*/', i + 2);
    // A nested comment would need counting; such text is sent as it was.
    if (end < 0 || text.slice(i + 2, end).includes('/*')) return null;
    return end + 2;
  }
  if (c === '$' && !/[\w$]/.test(text[i - 1] ?? ' ')) {
    const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(i, i + 66));
    if (tag) {
      const end = text.indexOf(tag[0], i + tag[0].length);
      return end < 0 ? null : end + tag[0].length;
    }
  }
  return i;
}

/** A write whose answer the caller cannot use: INSERT, UPDATE or DELETE without RETURNING. */
export function isBlindWrite(text: string): boolean {
  return /^\s*(insert|update|delete)\b/i.test(text) && !/\breturning\b/i.test(text);
}

/**
 * A single-row INSERT … VALUES ($1, …, $n) [ON CONFLICT (…) DO NOTHING]: rows of the same statement can be sent
 * as one multi-row INSERT with the same effect (a later duplicate is skipped as it would be one statement later).
 * Answers the text before and after the row, or null.
 */
export function singleRowInsert(text: string): { head: string; row: string; tail: string } | null {
  const m = /^(\s*insert\s+into\s+[a-z_][a-z0-9_.]*\s*\([a-z0-9_,\s]*\)\s*values\s*)(\(\s*\$\d+(?:\s*,\s*\$\d+)*\s*\))(\s*(?:on\s+conflict\s*\([a-z0-9_,\s]*\)\s*do\s+nothing)?\s*)$/i.exec(text);
  return m ? { head: m[1]!, row: m[2]!, tail: m[3]! } : null;
}
