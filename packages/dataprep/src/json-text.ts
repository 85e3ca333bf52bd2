import { FORBIDDEN_JSON_KEYS } from '@ito/contracts';

/**
 * The `text` string of one JSON-lines document, read without building the document's object. The strict parser
 * (`parseStrictJson`) stays the authority: this scanner checks the whole line against the same rules (JSON
 * grammar, no duplicate or prototype key at any depth, no U+0000, bounded nesting) and answers only when the line
 * is plainly valid, its top level an object and its `text` a string. For anything else (an escaped key, an object
 * with many keys, deep nesting, an error of any kind) it answers `undefined` and the caller parses the line
 * strictly, which gives the same value, or the same error message, as it always did.
 *
 * The grammar's pieces are sticky regular expressions, so the characters of a long string are matched by the
 * regex engine's compiled code rather than by a loop here. A string with escapes is decoded by `JSON.parse` of its
 * literal alone, which decodes exactly as the strict parser does (a `\u` escape is one UTF-16 unit, lone
 * surrogates included).
 */

/** A JSON string: no raw control character, only the escapes JSON allows, and no `\u0000` (the strict parser's rule). */
const STRING = /"(?:[^"\\\u0000-\u001f]+|\\(?:["\\/bfnrt]|u(?!0000)[0-9a-fA-F]{4}))*"/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;
/** Past these the line is unusual: the strict parser decides. */
const MAX_FAST_DEPTH = 16;
const MAX_FAST_KEYS = 32;

const QUOTE = 0x22;

export function scanJsonText(line: string): string | undefined {
  let pos = 0;
  let text: string | undefined;
  /** Keys seen in each open object (null for an array), innermost last. */
  const open: Array<string[] | null> = [];

  const skip = (): void => {
    WHITESPACE.lastIndex = pos;
    WHITESPACE.test(line);
    pos = WHITESPACE.lastIndex;
  };
  /** The end of the string literal at `pos`, or -1 when there is none the fast path takes. */
  const stringEnd = (): number => {
    if (line.charCodeAt(pos) !== QUOTE) return -1;
    STRING.lastIndex = pos;
    return STRING.test(line) ? STRING.lastIndex : -1;
  };

  skip();
  if (line.charCodeAt(pos) !== 0x7b) return undefined;
  let readingText = false;
  for (;;) {
    // One value, at `pos`.
    const c = line.charCodeAt(pos);
    if (readingText) {
      const end = stringEnd();
      if (end < 0) return undefined;
      const literal = line.slice(pos, end);
      text = literal.indexOf('\\') === -1 ? literal.slice(1, -1) : (JSON.parse(literal) as string);
      pos = end;
      readingText = false;
    } else if (c === 0x7b || c === 0x5b) {
      if (open.length >= MAX_FAST_DEPTH) return undefined;
      pos++;
      skip();
      if (line.charCodeAt(pos) !== (c === 0x7b ? 0x7d : 0x5d)) {
        open.push(c === 0x7b ? [] : null);
        if (c === 0x5b) continue; // the array's first element
        const key = readKey();
        if (key === undefined) return undefined;
        readingText = open.length === 1 && key === 'text';
        continue;
      }
      pos++;
    } else if (c === QUOTE) {
      const end = stringEnd();
      if (end < 0) return undefined;
      pos = end;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER.lastIndex = pos;
      if (!NUMBER.test(line)) return undefined;
      pos = NUMBER.lastIndex;
    } else if (line.startsWith('true', pos)) pos += 4;
    else if (line.startsWith('false', pos)) pos += 5;
    else if (line.startsWith('null', pos)) pos += 4;
    else return undefined;

    // After a value: close every container that ends here, then go on to the next member.
    for (;;) {
      skip();
      const inner = open.at(-1);
      if (inner === undefined) return pos === line.length ? text : undefined;
      const next = line.charCodeAt(pos);
      if (next === 0x2c) {
        pos++;
        skip();
        if (inner === null) break;
        const key = readKey();
        if (key === undefined) return undefined;
        readingText = open.length === 1 && key === 'text';
        break;
      }
      if (next !== (inner === null ? 0x5d : 0x7d)) return undefined;
      pos++;
      open.pop();
    }
  }

  /** `"key" :` of the innermost object, leaving `pos` at its value; undefined when the fast path does not take it. */
  function readKey(): string | undefined {
    const keys = open.at(-1)!;
    const end = stringEnd();
    if (end < 0) return undefined;
    const key = line.slice(pos + 1, end - 1);
    // An escaped key could spell a key seen unescaped: only the strict parser compares decoded keys.
    if (key.indexOf('\\') !== -1 || keys.length >= MAX_FAST_KEYS || keys.includes(key) || FORBIDDEN_JSON_KEYS.includes(key)) return undefined;
    keys.push(key);
    pos = end;
    skip();
    if (line.charCodeAt(pos) !== 0x3a) return undefined;
    pos++;
    skip();
    return key;
  }
}
