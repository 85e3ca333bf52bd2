import { FORBIDDEN_JSON_KEYS } from '@ito/contracts';
import { indexOfByte } from './byte-search.js';
import { NOT_PLAIN, PLACED_AT, PLAIN, STRING_PATH, decodedText, plainText, scanBytes } from './text-scan.js';

/**
 * The UTF-8 of the normalised `text` of one JSON-lines document, from the line's bytes, for a text the exact pass
 * can hash without building a string. The same scan as ./json-text.ts (the same grammar, duplicate and prototype
 * keys, depth and key bounds, and it declines whatever that one declines), on bytes instead of a decoded string,
 * and narrower: it answers only when the text literal's bytes are already the normalised text (`plainText`), or
 * the text scan decodes them to it (`decodedText`, ./text-scan.ts); for anything else it answers false and the caller
 * reads the line as a string, as it always did. The line is valid UTF-8 (the reader checked), so a byte from 0x80
 * up is part of a character, never of the grammar.
 */

const MAX_FAST_DEPTH = 16;
const MAX_FAST_KEYS = 32;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * After a scan that answered true, the normalised text's bytes are `[textStart, textEnd)` of `textBytes`: the text
 * scan's memory, where the plain test placed the literal or the decoder wrote it (valid until its next call).
 */
export let textBytes: Uint8Array = new Uint8Array(0);
export let textStart = 0;
export let textEnd = 0;

// The scan's state: module-level, since a scan never calls out to code that could start another.
let src: Uint8Array = new Uint8Array(0);
let at = 0;
/** Whether the last string `stringEnd` passed had an escape; whether the last key `readKey` read is `text`. */
let escaped = false;
let keyIsText = false;

export function scanJsonTextBytes(line: Uint8Array, caseFold: boolean): boolean {
  src = line;
  at = 0;
  try {
    return scan(caseFold);
  } finally {
    src = EMPTY;
  }
}
const EMPTY = new Uint8Array(0);

/**
 * The open containers, innermost last (`depth` of them): 1 for an object, 0 for an array. Each open object's keys
 * are byte ranges of the line, start and end, from `keyRanges[level * 2 * MAX_FAST_KEYS]` on, `keyCounts[level]`
 * of them. Typed and reused, so a scan allocates nothing.
 */
const openKinds = new Uint8Array(MAX_FAST_DEPTH);
const keyCounts = new Uint8Array(MAX_FAST_DEPTH);
const keyRanges = new Int32Array(MAX_FAST_DEPTH * 2 * MAX_FAST_KEYS);
let depth = 0;

function scan(caseFold: boolean): boolean {
  let found = false;
  let readingText = false;
  depth = 0;
  skip();
  if (src[at] !== 0x7b) return false;
  for (;;) {
    const c = src[at];
    if (readingText) {
      if (c !== QUOTE) return false;
      // A literal without escapes ends at the first quote; one that is not plain is read to its end and decoded.
      const close = indexOfByte(src, QUOTE, at + 1);
      const plain = close === -1 ? NOT_PLAIN : plainText(src, at + 1, close, caseFold);
      if (plain === STRING_PATH) return false;
      if (plain === PLAIN) {
        // The plain test placed the literal's bytes in the scan's memory: the digest is taken there.
        textBytes = scanBytes();
        textStart = PLACED_AT;
        textEnd = PLACED_AT + close - (at + 1);
        at = close + 1;
      } else {
        const end = textLiteralEnd(at + 1);
        const decoded = end < 0 ? null : decodedText(src, at + 1, end - 1, caseFold, false);
        if (decoded === null) return false;
        textBytes = decoded;
        textStart = 0;
        textEnd = decoded.length;
        at = end;
      }
      found = true;
      readingText = false;
    } else if (c === 0x7b || c === 0x5b) {
      if (depth >= MAX_FAST_DEPTH) return false;
      at++;
      skip();
      if (src[at] !== (c === 0x7b ? 0x7d : 0x5d)) {
        openKinds[depth] = c === 0x7b ? 1 : 0;
        keyCounts[depth] = 0;
        depth++;
        if (c === 0x5b) continue;
        if (!readKey(depth - 1)) return false;
        readingText = depth === 1 && keyIsText;
        continue;
      }
      at++;
    } else if (c === QUOTE) {
      const end = stringEnd();
      if (end < 0) return false;
      at = end;
    } else if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) {
      const end = numberEnd();
      if (end < 0) return false;
      at = end;
    } else if (word('true')) at += 4;
    else if (word('false')) at += 5;
    else if (word('null')) at += 4;
    else return false;

    for (;;) {
      skip();
      if (depth === 0) return at === src.length && found;
      const inObject = openKinds[depth - 1] === 1;
      const next = src[at];
      if (next === 0x2c) {
        at++;
        skip();
        if (!inObject) break;
        if (!readKey(depth - 1)) return false;
        readingText = depth === 1 && keyIsText;
        break;
      }
      if (next !== (inObject ? 0x7d : 0x5d)) return false;
      at++;
      depth--;
    }
  }
}

function skip(): void {
  for (;;) {
    const c = src[at];
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) at++;
    else return;
  }
}

function word(w: string): boolean {
  for (let i = 0; i < w.length; i++) if (src[at + i] !== w.charCodeAt(i)) return false;
  return true;
}

const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;
const isHex = (c: number | undefined) => c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));

/** The end of the number at `at` by JSON's grammar (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`), or -1. */
function numberEnd(): number {
  let i = at;
  if (src[i] === 0x2d) i++;
  if (src[i] === 0x30) i++;
  else if (isDigit(src[i])) while (isDigit(src[i])) i++;
  else return -1;
  if (src[i] === 0x2e && isDigit(src[i + 1])) {
    i++;
    while (isDigit(src[i])) i++;
  }
  const e = src[i];
  if (e === 0x65 || e === 0x45) {
    let j = i + 1;
    if (src[j] === 0x2b || src[j] === 0x2d) j++;
    if (isDigit(src[j])) {
      while (isDigit(src[j])) j++;
      i = j;
    }
  }
  return i;
}

/**
 * The end (past the closing quote) of the string literal at `at`, or -1 when it is not one: no raw control
 * character, only the escapes JSON allows, and no `\u0000` (the strict parser's rule).
 */
function stringEnd(): number {
  escaped = false;
  if (src[at] !== QUOTE) return -1;
  for (let i = at + 1; i < src.length; ) {
    const c = src[i]!;
    if (c === QUOTE) return i + 1;
    if (c < 0x20) return -1;
    if (c !== BACKSLASH) {
      i++;
      continue;
    }
    escaped = true;
    const e = src[i + 1];
    if (e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) i += 2;
    else if (e === 0x75 && isHex(src[i + 2]) && isHex(src[i + 3]) && isHex(src[i + 4]) && isHex(src[i + 5]) && !(src[i + 2] === 0x30 && src[i + 3] === 0x30 && src[i + 4] === 0x30 && src[i + 5] === 0x30)) i += 6;
    else return -1;
  }
  return -1;
}

/**
 * The end (after its closing quote) of the text literal whose content starts at `from`, or -1: found by searching
 * for quotes and backslashes (memchr) and stepping over each escape, where `stringEnd` reads every byte. The
 * escapes and control characters it steps over are checked by `decodedText`, which refuses what the grammar
 * does, so a malformed literal is still left to the string path.
 */
function textLiteralEnd(from: number): number {
  let backslash = indexOfByte(src, BACKSLASH, from);
  for (let i = from; ; ) {
    const quote = indexOfByte(src, QUOTE, i);
    if (quote < 0) return -1;
    if (backslash < 0 || backslash > quote) return quote + 1;
    i = backslash + (src[backslash + 1] === 0x75 ? 6 : 2);
    backslash = indexOfByte(src, BACKSLASH, i);
  }
}

/**
 * `"key" :` of the open object at `level`, leaving `at` on its value; false when the fast path does not take it.
 * A key is kept as its byte range: raw UTF-8 without escapes, so equal keys are equal bytes, and no string is
 * built for it.
 */
function readKey(level: number): boolean {
  const end = stringEnd();
  // An escaped key could spell a key seen unescaped: only the strict parser compares decoded keys.
  const count = keyCounts[level]!;
  if (end < 0 || escaped || count >= MAX_FAST_KEYS) return false;
  const start = at + 1;
  const stop = end - 1;
  const base = level * 2 * MAX_FAST_KEYS;
  for (let k = base; k < base + 2 * count; k += 2) if (sameBytes(keyRanges[k]!, keyRanges[k + 1]!, start, stop)) return false;
  for (let f = 0; f < FORBIDDEN.length; f++) if (sameBytes(0, FORBIDDEN[f]!.length, start, stop, FORBIDDEN[f])) return false;
  keyRanges[base + 2 * count] = start;
  keyRanges[base + 2 * count + 1] = stop;
  keyCounts[level] = count + 1;
  keyIsText = sameBytes(0, TEXT.length, start, stop, TEXT);
  at = end;
  skip();
  if (src[at] !== 0x3a) return false;
  at++;
  skip();
  return true;
}

/** Whether `[aStart, aEnd)` of `a` (the line when not given) and `[bStart, bEnd)` of the line are the same bytes. */
function sameBytes(aStart: number, aEnd: number, bStart: number, bEnd: number, a: Uint8Array = src): boolean {
  if (aEnd - aStart !== bEnd - bStart) return false;
  for (let i = 0; i < aEnd - aStart; i++) if (a[aStart + i] !== src[bStart + i]) return false;
  return true;
}

const FORBIDDEN = FORBIDDEN_JSON_KEYS.map((k) => Buffer.from(k, 'utf8'));
const TEXT = Buffer.from('text', 'utf8');
