/**
 * PostgreSQL array literals for the projection's bulk writes, built in one pass. node-pg turns a JS array into a
 * literal by quoting every element and running two regular-expression replaces over it, whatever it holds: on a
 * catch-up batch (tens of thousands of elements, and each run's state JSON) that was a twentieth of the process's
 * CPU. Numbers need no quoting at all, and an element is escaped only when it holds a quote or a backslash, the two
 * characters a quoted element must escape.
 */

/**
 * `{1,2,NULL}` for a `bigint[]`, `int[]` or `float8[]` parameter: each number as node-pg writes it (`String`), so
 * the rows are the same; a non-finite one is `NaN` or `Infinity` as before, which only `float8` accepts.
 */
export function numberArrayLiteral(values: readonly (number | null)[]): string {
  return arrayLiteral(values, String);
}

/** `{"a","b\"c",NULL}` for a `text[]` parameter (or any type read from text, such as `jsonb[]`). */
export function textArrayLiteral(values: readonly (string | null)[]): string {
  return arrayLiteral(values, quoted);
}

function arrayLiteral<T>(values: readonly (T | null)[], element: (v: T) => string): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (i > 0) out += ',';
    out += v === null ? 'NULL' : element(v);
  }
  return `${out}}`;
}

const quoted = (v: string): string => `"${v.includes('"') || v.includes('\\') ? v.replace(/[\\"]/g, '\\$&') : v}"`;
