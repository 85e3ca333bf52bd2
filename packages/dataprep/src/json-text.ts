import { FORBIDDEN_JSON_KEYS } from '@ito/contracts';

/**
 * The `text` string of one JSON-lines document, read without building the document's object. The strict parser
 * (`parseStrictJson`) stays the authority: this scanner checks the whole line against the same rules (JSON
 * grammar, no duplicate or prototype key at any depth, no U+0000, bounded nesting) and answers only when the line
 * is plainly valid, its top level an object and its `text` a string. For anything else (an escaped key, an object
 * with many keys, deep nesting, an error of any kind) it answers `undefined` and the caller parses the line
 * strictly, which gives the same value, or the same error message, as it always did.
 *
 * Keys and other values are matched by sticky regular expressions of JSON's grammar; the text, the long part of
 * a line, is found by `indexOf` of its closing quote and checked and decoded by `JSON.parse` of its literal alone
 * (native code), which decodes exactly as the strict parser does (a `\u` escape is one UTF-16 unit, lone
 * surrogates included).
 */

/** A JSON string: no raw control character, only the escapes JSON allows, and no `\u0000` (the strict parser's rule). */
const STRING = /"(?:[^"\\\u0000-\u001f]+|\\(?:["\\/bfnrt]|u(?!0000)[0-9a-fA-F]{4}))*"/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
/** Past these the line is unusual: the strict parser decides. */
const MAX_FAST_DEPTH = 16;
const MAX_FAST_KEYS = 32;

const QUOTE = 0x22;
const BACKSLASH = '\\';

// The scan's state: module-level, since a scan never calls out to code that could start another.
let src = '';
let at = 0;

export function scanJsonText(line: string): string | undefined {
  src = line;
  at = 0;
  try {
    return scan();
  } finally {
    src = '';
  }
}

function scan(): string | undefined {
  let text: string | undefined;
  /** Keys seen in each open object (null for an array), innermost last. */
  const open: Array<string[] | null> = [];
  let readingText = false;
  skip();
  if (src.charCodeAt(at) !== 0x7b) return undefined;
  for (;;) {
    // One value, at `at`.
    const c = src.charCodeAt(at);
    if (readingText) {
      text = readText();
      if (text === undefined) return undefined;
      readingText = false;
    } else if (c === 0x7b || c === 0x5b) {
      if (open.length >= MAX_FAST_DEPTH) return undefined;
      at++;
      skip();
      if (src.charCodeAt(at) !== (c === 0x7b ? 0x7d : 0x5d)) {
        if (c === 0x5b) {
          open.push(null);
          continue; // the array's first element
        }
        const keys: string[] = [];
        open.push(keys);
        const key = readKey(keys);
        if (key === undefined) return undefined;
        readingText = open.length === 1 && key === 'text';
        continue;
      }
      at++;
    } else if (c === QUOTE) {
      const end = stringEnd();
      if (end < 0) return undefined;
      at = end;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER.lastIndex = at;
      if (!NUMBER.test(src)) return undefined;
      at = NUMBER.lastIndex;
    } else if (src.startsWith('true', at)) at += 4;
    else if (src.startsWith('false', at)) at += 5;
    else if (src.startsWith('null', at)) at += 4;
    else return undefined;

    // After a value: close every container that ends here, then go on to the next member.
    for (;;) {
      skip();
      const inner = open.at(-1);
      if (inner === undefined) return at === src.length ? text : undefined;
      const next = src.charCodeAt(at);
      if (next === 0x2c) {
        at++;
        skip();
        if (inner === null) break;
        const key = readKey(inner);
        if (key === undefined) return undefined;
        readingText = open.length === 1 && key === 'text';
        break;
      }
      if (next !== (inner === null ? 0x5d : 0x7d)) return undefined;
      at++;
      open.pop();
    }
  }
}

function skip(): void {
  for (;;) {
    const c = src.charCodeAt(at);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) at++;
    else return;
  }
}

/** The end (past the closing quote) of the string literal at `at`, or -1 when it is not one (the grammar's regex). */
function stringEnd(): number {
  if (src.charCodeAt(at) !== QUOTE) return -1;
  STRING.lastIndex = at;
  return STRING.test(src) ? STRING.lastIndex : -1;
}

/**
 * The top-level text, decoded, leaving `at` past it; undefined when it is not a string the fast path takes. The
 * literal ends at the first quote not escaped (an odd run of backslashes before a quote escapes it);
 * `JSON.parse` of the literal alone checks its grammar and decodes it natively, and the strict parser's one extra
 * rule, no U+0000, is checked on the result.
 */
function readText(): string | undefined {
  if (src.charCodeAt(at) !== QUOTE) return undefined;
  let close = at;
  for (;;) {
    close = src.indexOf('"', close + 1);
    if (close === -1) return undefined;
    let slashes = 0;
    while (src.charCodeAt(close - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) break;
  }
  let text: unknown;
  try {
    text = JSON.parse(src.slice(at, close + 1));
  } catch {
    return undefined;
  }
  if (typeof text !== 'string' || text.indexOf('\u0000') !== -1) return undefined;
  at = close + 1;
  return text;
}

/** `"key" :` of the innermost object, leaving `at` on its value; undefined when the fast path does not take it. */
function readKey(keys: string[]): string | undefined {
  const end = stringEnd();
  if (end < 0) return undefined;
  const key = src.slice(at + 1, end - 1);
  // An escaped key could spell a key seen unescaped: only the strict parser compares decoded keys.
  if (key.indexOf(BACKSLASH) !== -1 || keys.length >= MAX_FAST_KEYS || keys.includes(key) || FORBIDDEN_JSON_KEYS.includes(key)) return undefined;
  keys.push(key);
  at = end;
  skip();
  if (src.charCodeAt(at) !== 0x3a) return undefined;
  at++;
  skip();
  return key;
}
