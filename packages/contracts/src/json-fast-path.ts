/**
 * The fast path of {@link parseStrictJson}: the engine's own `JSON.parse`, kept only when it certainly gave the
 * strict parser's answer. Every request body goes through the strict parser, and for a heartbeat batch of 16
 * beats (14 kB) its character loop cost about three times the native parse (test/bench/README.md, heartbeats,
 * "beat cost"). It answers the value or `undefined` ("not sure"); on `undefined` the strict parser decides, so
 * every refusal and its message stay the strict parser's.
 *
 * What `JSON.parse` does not refuse, and how each is ruled out here:
 * - a duplicate key (the last one wins): every key the parsed objects hold is counted, and so is every `":` in
 *   the text. In valid JSON an unescaped quote followed by `:` ends a key, and a quote inside a string is escaped
 *   (`\":` counts too, as one more), so once no key is followed by whitespace before its colon (checked first),
 *   the text's count is the keys written plus those escaped quotes, and equals the parsed keys only when no key
 *   was dropped and no string holds `\":`.
 * - a `__proto__`, `constructor` or `prototype` key, nesting deeper than `maxDepth`: the walk that counts keys
 *   looks at each key and each level.
 * - U+0000 in a string: a text holding `\u0000` anywhere is left to the strict parser (a raw U+0000 is a control
 *   character, which `JSON.parse` refuses itself).
 */
export function fastJson(text: string, maxDepth: number, forbiddenKeys: readonly string[]): { value: unknown } | undefined {
  if (text.includes('\\u0000')) return undefined;
  const colons = keyColons(text);
  if (colons < 0) return undefined;
  let value: unknown;
  const walk = { keys: 0, forbiddenKeys };
  try {
    value = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !certain(value, 1, maxDepth, walk)) return undefined;
  } catch {
    // Not JSON, or nested past the stack this walk may use (a caller's maxDepth far above the default).
    return undefined;
  }
  return colons === walk.keys ? { value } : undefined;
}

/**
 * How many times `":` occurs in the text, or -1 when a quote, whitespace and then a colon occurs (a key written
 * with space before its colon, or a string holding that). One pass from colon to colon: the text's `:` are far
 * fewer than its characters, and looking back from each is about half the cost of a search for `":` plus a
 * regular expression over the whole text (a heartbeat batch's 14 kB is parsed per request).
 */
function keyColons(text: string): number {
  let count = 0;
  for (let i = text.indexOf(':'); i !== -1; i = text.indexOf(':', i + 1)) {
    let j = i - 1;
    while (isJsonSpace(text.charCodeAt(j))) j--;
    if (text.charCodeAt(j) !== 0x22 /* " */) continue;
    if (j < i - 1) return -1;
    count++;
  }
  return count;
}

const isJsonSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function certain(v: object, depth: number, maxDepth: number, walk: { keys: number; forbiddenKeys: readonly string[] }): boolean {
  if (depth > maxDepth) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (typeof x === 'object' && x !== null && !certain(x, depth + 1, maxDepth, walk)) return false;
    }
    return true;
  }
  const record = v as Record<string, unknown>;
  for (const k in record) {
    walk.keys++;
    if (walk.forbiddenKeys.includes(k)) return false;
    const x = record[k];
    if (typeof x === 'object' && x !== null && !certain(x, depth + 1, maxDepth, walk)) return false;
  }
  return true;
}
