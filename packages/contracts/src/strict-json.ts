/**
 * The one JSON parser for everything that comes from outside: manifests and every request body.
 *
 * JSON.parse keeps the last of two equal keys, accepts `__proto__` as a key, recurses, and quotes the input in
 * its error messages. This parser gives one input one meaning instead: a duplicate key at any depth is refused
 * (naming its path), so is a `__proto__`, `constructor` or `prototype` key (so no key can reach an object's
 * prototype or slip past a schema), so is nesting deeper than {@link MAX_JSON_DEPTH} and U+0000 in a string
 * (PostgreSQL text and jsonb cannot hold it). It is iterative (an explicit stack, no recursion), one pass, linear
 * in the input, and its errors say what is wrong by line, column and path, never by quoting the input. A text
 * that is certainly accepted as it is (json-fast-path.ts) is parsed by the engine's `JSON.parse` instead.
 */

import { fastJson } from './json-fast-path.js';

/** Deepest nesting of objects and arrays accepted; a manifest needs six levels. */
export const MAX_JSON_DEPTH = 64;

/** Keys refused everywhere: assigning them can reach an object's prototype. */
export const FORBIDDEN_JSON_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];

/** One step of a path: an array index, or an object key with its 1-based position among that object's keys. */
export type JsonPathSegment = number | { key: string; position: number };

export type StrictJsonFailure = 'syntax' | 'duplicate_key' | 'forbidden_key' | 'too_deep' | 'nul_character';

export interface StrictJsonError {
  reason: StrictJsonFailure;
  /** What is wrong and where (line and column), never any of the input's text. */
  message: string;
  line: number;
  column: number;
  /** Where in the document the problem is; render it with `renderJsonPath` before showing it. */
  path: JsonPathSegment[];
}

export type StrictJsonResult = { ok: true; value: unknown } | { ok: false; error: StrictJsonError };

interface ObjectFrame {
  kind: 'object';
  value: Record<string, unknown>;
  key: string;
  keys: number;
}
interface ArrayFrame {
  kind: 'array';
  value: unknown[];
}
type Frame = ObjectFrame | ArrayFrame;

class Refusal {
  constructor(
    readonly reason: StrictJsonFailure,
    readonly what: string,
    readonly offset: number,
    readonly extra: JsonPathSegment | null = null,
  ) {}
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ESCAPES: Record<number, string> = { 0x22: '"', 0x5c: '\\', 0x2f: '/', 0x62: '\b', 0x66: '\f', 0x6e: '\n', 0x72: '\r', 0x74: '\t' };

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

/** Line and column (1-based, in UTF-16 units) of an offset; computed only when there is an error to report. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

export function parseStrictJson(text: string, opts: { maxDepth?: number } = {}): StrictJsonResult {
  const maxDepth = opts.maxDepth ?? MAX_JSON_DEPTH;
  // The engine's parser when its answer is certainly this one's (json-fast-path.ts); else the walk below decides.
  const fast = fastJson(text, maxDepth, FORBIDDEN_JSON_KEYS);
  if (fast) return { ok: true, value: fast.value };
  const stack: Frame[] = [];
  let pos = 0;

  const skipWhitespace = (): void => {
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) pos++;
      else return;
    }
  };
  const unexpected = (): Refusal => new Refusal('syntax', pos >= text.length ? 'unexpected end of input' : 'unexpected character', pos);

  const readString = (): string => {
    const start = pos;
    pos++; // the opening quote
    let out = '';
    let chunk = pos;
    for (;;) {
      if (pos >= text.length) throw new Refusal('syntax', 'unterminated string', start);
      const c = text.charCodeAt(pos);
      if (c === QUOTE) {
        out += text.slice(chunk, pos);
        pos++;
        return out;
      }
      if (c < 0x20) throw new Refusal('syntax', 'control character in a string (escape it)', pos);
      if (c !== BACKSLASH) {
        pos++;
        continue;
      }
      out += text.slice(chunk, pos);
      const e = text.charCodeAt(pos + 1);
      if (e === 0x75) {
        let code = 0;
        for (let i = 2; i < 6; i++) {
          const h = hexValue(text.charCodeAt(pos + i));
          if (h < 0) throw new Refusal('syntax', 'invalid \\u escape', pos);
          code = code * 16 + h;
        }
        if (code === 0) throw new Refusal('nul_character', 'a string holds U+0000, which is not accepted', pos);
        out += String.fromCharCode(code);
        pos += 6;
      } else {
        const replacement = ESCAPES[e];
        if (replacement === undefined) throw new Refusal('syntax', 'invalid escape sequence', pos);
        out += replacement;
        pos += 2;
      }
      chunk = pos;
    }
  };

  const readNumber = (): number => {
    const start = pos;
    if (text.charCodeAt(pos) === 0x2d) pos++;
    const first = text.charCodeAt(pos);
    if (first === 0x30) pos++;
    else if (isDigit(first)) while (isDigit(text.charCodeAt(pos))) pos++;
    else throw new Refusal('syntax', 'invalid number', start);
    if (text.charCodeAt(pos) === 0x2e) {
      pos++;
      if (!isDigit(text.charCodeAt(pos))) throw new Refusal('syntax', 'invalid number', start);
      while (isDigit(text.charCodeAt(pos))) pos++;
    }
    const e = text.charCodeAt(pos);
    if (e === 0x65 || e === 0x45) {
      pos++;
      const sign = text.charCodeAt(pos);
      if (sign === 0x2b || sign === 0x2d) pos++;
      if (!isDigit(text.charCodeAt(pos))) throw new Refusal('syntax', 'invalid number', start);
      while (isDigit(text.charCodeAt(pos))) pos++;
    }
    return Number(text.slice(start, pos));
  };

  /** Reads `"key" :` for the object on top of the stack, refusing duplicates and prototype keys. */
  const readKey = (frame: ObjectFrame): void => {
    if (text.charCodeAt(pos) !== QUOTE) throw new Refusal('syntax', 'expected a key in double quotes', pos);
    const at = pos;
    const key = readString();
    frame.keys++;
    const segment = { key, position: frame.keys };
    if (FORBIDDEN_JSON_KEYS.includes(key)) {
      throw new Refusal('forbidden_key', `a key that is not accepted anywhere (${FORBIDDEN_JSON_KEYS.join(', ')} are refused)`, at, segment);
    }
    if (Object.hasOwn(frame.value, key)) throw new Refusal('duplicate_key', 'duplicate key (a key may appear only once in an object)', at, segment);
    frame.key = key;
    skipWhitespace();
    if (text.charCodeAt(pos) !== 0x3a) throw new Refusal('syntax', "expected ':' after a key", pos);
    pos++;
    skipWhitespace();
  };

  const open = (): void => {
    if (stack.length >= maxDepth) throw new Refusal('too_deep', `nesting deeper than ${maxDepth} levels`, pos);
  };

  try {
    skipWhitespace();
    for (;;) {
      // Read one value; containers push a frame and go round again for their first member.
      let value: unknown;
      const c = text.charCodeAt(pos);
      if (c === 0x7b) {
        open();
        pos++;
        skipWhitespace();
        const obj: Record<string, unknown> = {};
        if (text.charCodeAt(pos) === 0x7d) {
          pos++;
          value = obj;
        } else {
          const frame: ObjectFrame = { kind: 'object', value: obj, key: '', keys: 0 };
          stack.push(frame);
          readKey(frame);
          continue;
        }
      } else if (c === 0x5b) {
        open();
        pos++;
        skipWhitespace();
        if (text.charCodeAt(pos) === 0x5d) {
          pos++;
          value = [];
        } else {
          stack.push({ kind: 'array', value: [] });
          continue;
        }
      } else if (c === QUOTE) {
        value = readString();
      } else if (c === 0x2d || isDigit(c)) {
        value = readNumber();
      } else if (text.startsWith('true', pos)) {
        value = true;
        pos += 4;
      } else if (text.startsWith('false', pos)) {
        value = false;
        pos += 5;
      } else if (text.startsWith('null', pos)) {
        value = null;
        pos += 4;
      } else {
        throw unexpected();
      }

      // Hand the finished value to its container, closing every container that ends here.
      for (;;) {
        skipWhitespace();
        const frame = stack.at(-1);
        if (!frame) {
          if (pos < text.length) throw new Refusal('syntax', 'unexpected content after the JSON value', pos);
          return { ok: true, value };
        }
        const next = text.charCodeAt(pos);
        if (frame.kind === 'array') {
          frame.value.push(value);
          if (next === 0x2c) {
            pos++;
            skipWhitespace();
            break;
          }
          if (next !== 0x5d) throw pos >= text.length ? unexpected() : new Refusal('syntax', "expected ',' or ']'", pos);
        } else {
          frame.value[frame.key] = value;
          if (next === 0x2c) {
            pos++;
            skipWhitespace();
            readKey(frame);
            break;
          }
          if (next !== 0x7d) throw pos >= text.length ? unexpected() : new Refusal('syntax', "expected ',' or '}'", pos);
        }
        pos++;
        value = frame.value;
        stack.pop();
      }
    }
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    const path: JsonPathSegment[] = [];
    // An object whose first key is being read has no member to point into yet.
    for (const f of stack) if (f.kind === 'array' || f.keys > 0) path.push(f.kind === 'array' ? f.value.length : { key: f.key, position: f.keys });
    // A refused key is reported as the key itself, not as the key the object had before it.
    if (err.extra) path[path.length - 1] = err.extra;
    const { line, column } = lineAndColumn(text, err.offset);
    return { ok: false, error: { reason: err.reason, message: `${err.what} at line ${line}, column ${column}`, line, column, path } };
  }
}
