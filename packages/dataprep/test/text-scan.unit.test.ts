import { describe, expect, it } from 'vitest';
import { normalizeText } from '@ito/dataprep';
import { rngOf } from '../../../test/fixtures/dataprep/generator.js';
import { NOT_PLAIN, PLAIN, STRING_PATH, decodedText, plainText } from '../src/text-scan.js';

const FOLD = { unicode: 'NFC', whitespace: 'collapse', case_fold: true } as const;
const KEEP_CASE = { ...FOLD, case_fold: false } as const;
const utf8 = (s: string) => Buffer.from(s, 'utf8');

/**
 * Pieces of text, each a trap for one rule: white space below U+0300 (tab to carriage return, the space, U+00A0),
 * characters that are not white space though near it (U+0085, U+0001, DEL), escapes' targets and Latin letters of
 * both cases; and, rarer, what only the string path answers: white space and letters from U+0300 up, and a
 * combining mark NFC composes.
 */
const LOW = ['word', 'Word', 'WORD', 'é', 'É', 'ÿ', 'ǅ', ' ', '  ', '\t', '\n', '\r', '\f', '\v', '\u00a0', '\u0085', '\u0001', '\u007f', '"', '\\', '/'];
const HIGH = ['\u2003', 'e\u0301', 'ḁ', '日'];
/**
 * Characters from U+0300 up, each a trap for one rule: scripts NFC leaves alone, with and without case; marks
 * that compose with the letter before them, one that does not, two in a row and one after a precomposed letter;
 * Hangul jamo; characters NFC replaces (U+212B, U+2126, U+F900, U+1F71, U+1D15E); white space from U+0300 up;
 * letters lower-casing changes in length or context (U+0130, final sigma); characters from U+10000 up.
 */
const WIDE = [
  '日本語', 'ひらがな', 'か\u3099', 'ガ', '한국어', '\u1100\u1161', '가\u11a8', 'Привет', 'ПРИВЕТ', 'Ελληνικά', 'ΣΊΣΥΦΟΣ',
  'ά', 'ά', 'e\u0301', 'E\u0301', 'o\u0301\u0323', 'ẹ\u0302', 'ê\u0323', 'x\u0301', 'n\u0303', 'α\u0345', 'İ', 'ß', 'ﬁ',
  'Å', 'Ω', '\uf900', '😀', '𠀀', '\u{1d15e}', '\u2000', '\u3000', '\u2028', '\ufeff', '\u1680', 'ı', 'µ', 'Ç', 'क\u093c',
  'ক\u09be', 'עברית', 'العربية', '\u200b', '\u0301', ' \u0301',
];


/** A JSON string literal's content for `text`: what JSON.stringify writes, some characters escaped as `\uXXXX` or `\/`. */
function literalOf(text: string, r: () => number): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (code < 0x10000 && r() < 0.15) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else if (ch === '/' && r() < 0.5) out += '\\/';
    else out += JSON.stringify(ch).slice(1, -1);
  }
  return out;
}

/** Texts of 0 to about 300 characters, so that they span many sixteen-byte vectors; one in four may go beyond U+0300. */
function randomTexts(seed: number, count: number): string[] {
  const r = rngOf(seed);
  const pick = (xs: string[]) => xs[Math.floor(r() * xs.length)]!;
  return Array.from({ length: count }, () => {
    const high = r() < 0.25;
    const pieces = Math.floor(r() * 80);
    let text = '';
    for (let i = 0; i < pieces; i++) text += r() < 0.5 ? ' ' + 'abcdefghij'.slice(0, 1 + Math.floor(r() * 10)) : high && r() < 0.1 ? pick(HIGH) : pick(LOW);
    return text;
  });
}

/**
 * The scan's answer for one text, checked against normalizeText: `PLAIN` only when the bytes are the normalised
 * text, a decoded text only when it is the normalised text's UTF-8, and `STRING_PATH` only when decoding refuses too.
 */
function answer(bytes: Uint8Array, fold: boolean, raw: boolean, expected: string): 'plain' | 'decoded' | 'string' {
  const label = JSON.stringify(Buffer.from(bytes).toString('utf8'));
  const plain = plainText(bytes, 0, bytes.length, fold);
  if (plain === PLAIN) {
    expect(Buffer.from(bytes).toString('utf8'), label).toBe(expected);
    return 'plain';
  }
  const decoded = decodedText(bytes, 0, bytes.length, fold, raw);
  if (plain === STRING_PATH) expect(decoded, label).toBeNull();
  if (decoded === null) return 'string';
  expect(Buffer.from(decoded).toString('utf8'), label).toBe(expected);
  return 'decoded';
}

describe('the text scan', () => {
  it('answers JSON literals with the normalised text, or leaves them to the string path', () => {
    const r = rngOf(7);
    const seen = { plain: 0, decoded: 0, string: 0 };
    for (const text of randomTexts(3, 3000)) {
      const bytes = utf8(literalOf(text, r));
      for (const normalization of [KEEP_CASE, FOLD]) seen[answer(bytes, normalization.case_fold, false, normalizeText(text, normalization))]++;
    }
    // Every way out is taken, and the decoder answers most texts that are not plain.
    expect(seen.plain).toBeGreaterThan(50);
    expect(seen.decoded).toBeGreaterThan(2000);
    expect(seen.string).toBeGreaterThan(1000);
  });

  it('answers a text shard line taken as it is, backslashes and control characters included', () => {
    const seen = { plain: 0, decoded: 0, string: 0 };
    for (const text of randomTexts(5, 3000)) {
      for (const normalization of [KEEP_CASE, FOLD]) seen[answer(utf8(text), normalization.case_fold, true, normalizeText(text, normalization))]++;
    }
    expect(seen.decoded).toBeGreaterThan(2000);
    expect(seen.string).toBeGreaterThan(1000);
  });

  it('refuses raw control characters and malformed escapes in a JSON literal', () => {
    for (const literal of ['a\tb', 'a\u0001b', 'a\\', 'a\\x41', 'a\\u12', 'a\\u12g4', 'a\\u0000b', 'a\\ud83d\\ude00', 'a\\udc00', '\\u0301a']) {
      expect(decodedText(utf8(literal), 0, utf8(literal).length, false, false), JSON.stringify(literal)).toBeNull();
    }
    // The same bytes in a text shard are text.
    const raw = utf8('a\\x41\u0001');
    expect(Buffer.from(decodedText(raw, 0, raw.length, false, true)!).toString()).toBe('a\\x41\u0001');
  });

  it('stops at the first character that is not plain, and answers STRING_PATH only when a refused one comes first', () => {
    const of = (text: string) => plainText(utf8(text), 0, utf8(text).length, true);
    // The decoder refuses Ж when folding case (lower-casing changes it) and the string path answers.
    expect(of('a word\\tЖ and more words to fill')).toBe(NOT_PLAIN);
    expect(of('a word  Ж and more words to fill')).toBe(NOT_PLAIN);
    expect(of('a word Ж\\t and more words to fill')).toBe(STRING_PATH);
    expect(of('a word ж and more words to fill')).toBe(PLAIN);
  });

  it('finds each wrong byte in every lane of a vector, and a space run across two vectors', () => {
    for (let len = 1; len <= 48; len++) {
      const clean = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(2).slice(0, len);
      expect(plainText(utf8(clean), 0, len, true), clean).toBe(PLAIN);
      for (let at = 0; at < len; at++) {
        for (const [bad, fold] of [['\u0001', false], ['\\', false], ['\u00a0', false], ['\u0301', false], ['\u3000', false], ['A', true], ['É', true], ['Ж', true]] as const) {
          const text = clean.slice(0, at) + bad + clean.slice(at + 1);
          expect(plainText(utf8(text), 0, utf8(text).length, fold), `${JSON.stringify(text)} fold ${fold}`).not.toBe(PLAIN);
        }
        if (at > 0 && at < len - 1) {
          const spaced = `${clean.slice(0, at)}  ${clean.slice(at)}`;
          expect(plainText(utf8(spaced), 0, len + 2, false), spaced).toBe(NOT_PLAIN);
          const single = `${clean.slice(0, at)} ${clean.slice(at)}`;
          expect(plainText(utf8(single), 0, len + 1, false), single).toBe(PLAIN);
        }
      }
    }
  });

  it('decodes a two-byte character wherever a vector ends, and composes a mark after it, without leaving it to the string path', () => {
    for (let at = 0; at < 40; at++) {
      // An escape right after it: the vector that starts within the character is not copied whole.
      const text = `x${'a'.repeat(at)}é\\t${'b'.repeat(20)}`;
      expect(answer(utf8(text), false, false, `x${'a'.repeat(at)}é ${'b'.repeat(20)}`), `é at ${at}`).toBe('decoded');
      // A mark after it composes with it, whether the vector before the mark was copied whole or not: ü + U+0301 is ǘ.
      const marked = `x${'a'.repeat(at)}ü\u0301${'b'.repeat(20)}`;
      expect(answer(utf8(marked), false, true, `x${'a'.repeat(at)}ǘ${'b'.repeat(20)}`), `ü at ${at}`).toBe('decoded');
    }
  });

  it('reads a text inside a longer buffer, and texts longer than the memory it started with', () => {
    const line = utf8('{"text":"two words"} and more');
    expect(plainText(line, 9, 18, false)).toBe(PLAIN);
    // Quotes are the JSON scanner's concern; a space at the end is this one's.
    expect(plainText(line, 9, 21, false)).toBe(NOT_PLAIN);
    const long = `${'many words, '.repeat(30000)}End`;
    const longEscaped = literalOf(`${long}\t\tTail`, () => 0.5);
    expect(answer(utf8(long), false, false, normalizeText(long, KEEP_CASE))).toBe('plain');
    expect(answer(utf8(longEscaped), true, false, normalizeText(`${long}\t\tTail`, FOLD))).toBe('decoded');
    // A short text after a long one sees none of the long one's bytes.
    expect(answer(utf8('short\\ttext '), false, false, 'short text')).toBe('decoded');
    expect(answer(utf8('x'), false, false, 'x')).toBe('plain');
    // Nor does the plain test take what a text before it left past a short text's end for the text's own bytes.
    for (const stale of ['\\', '\u0001', '\u00a0', '\u0301']) {
      for (let len = 1; len < 16; len++) {
        expect(plainText(utf8(stale.repeat(64)), 0, utf8(stale.repeat(64)).length, false)).not.toBe(PLAIN);
        expect(plainText(utf8('b'.repeat(len)), 0, len, false), `length ${len} after ${JSON.stringify(stale)}`).toBe(PLAIN);
      }
    }
  });
  it('answers scripts beyond U+0300 that NFC leaves alone, and composes a mark with the letter before it', () => {
    const r = rngOf(11);
    const pick = (xs: string[]) => xs[Math.floor(r() * xs.length)]!;
    const seen = { plain: 0, decoded: 0, string: 0 };
    for (let n = 0; n < 3000; n++) {
      let text = '';
      for (let i = Math.floor(r() * 40); i > 0; i--) text += r() < 0.4 ? ' ' + 'abcdefghij'.slice(0, 1 + Math.floor(r() * 10)) : r() < 0.5 ? ' ' + pick(WIDE) : pick(r() < 0.7 ? WIDE : LOW);
      const bytes = utf8(literalOf(text, r));
      for (const normalization of [KEEP_CASE, FOLD]) seen[answer(bytes, normalization.case_fold, false, normalizeText(text, normalization))]++;
      seen[answer(utf8(text), false, true, normalizeText(text, KEEP_CASE))]++;
    }
    expect(seen.plain).toBeGreaterThan(120);
    expect(seen.decoded).toBeGreaterThan(600);
    expect(seen.string).toBeGreaterThan(1000);
    // Each kind the tables let through is answered without the string path.
    const of = (literal: string, fold: boolean) => answer(utf8(literal), fold, false, normalizeText(JSON.parse(`"${literal}"`), fold ? FOLD : KEEP_CASE));
    expect(of('日本語のテキスト、한국어 텍스트 😀 𠀀', true)).toBe('plain');
    expect(of('Привет, мир', false)).toBe('plain');
    expect(of('привет, мир', true)).toBe('plain');
    expect(of('Привет, мир', true)).toBe('string');
    expect(of('cafe\u0301 and the pin\u0303ata, ke\u0301\\u0301', false)).toBe('string');
    expect(of('cafe\u0301 and the pin\u0303ata', true)).toBe('decoded');
    expect(of('ca\\u0066e\\u0301 \\u65e5\\u672c  か\u3099', false)).toBe('decoded');
    expect(of('Cafe\u0301\u3000ẹ\u0302', false)).toBe('decoded');
  });

  it('keeps every starter the tables class as one, and makes every composition they hold, as normalizeText does', () => {
    for (let c = 0x80; c < 0x10000; c += 1) {
      if (c >= 0xd800 && c < 0xe000) continue;
      const text = `x${String.fromCodePoint(c)}y`;
      for (const fold of [false, true]) answer(utf8(text), fold, true, normalizeText(text, fold ? FOLD : KEEP_CASE));
    }
    let composed = 0;
    for (const base of ['a', 'e', 'o', 'u', 'n', 'c', 'A', 'E', 'α', 'ω', 'и', 'е', 'ẹ', 'ơ', 'か', 'ক', 'ᄀ']) {
      for (let m = 0x300; m < 0x3100; m++) {
        const text = `${base}${String.fromCodePoint(m)} z`;
        if (answer(utf8(text), false, true, normalizeText(text, KEEP_CASE)) === 'decoded' && text.normalize('NFC') !== text) composed++;
      }
    }
    expect(composed).toBeGreaterThan(150);
  });
});
