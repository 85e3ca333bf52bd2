import { describe, expect, it } from 'vitest';
import { parseStrictJson } from '@ito/contracts';
import { documentText } from '@ito/dataprep';
import { scanJsonText } from '../src/json-text.js';

/** The text of a line as the strict parser alone reads it: the behaviour the scanner must keep. */
function strictText(line: string): { text: string | null } | { error: string } {
  if (line.trim() === '') return { text: null };
  const parsed = parseStrictJson(line);
  if (!parsed.ok) return { error: `line 1 is not JSON: ${parsed.error.message}` };
  const v = parsed.value;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { error: 'line 1 is not a JSON object' };
  const text = (v as Record<string, unknown>).text;
  return typeof text === 'string' ? { text } : { error: 'line 1 has no string "text" field' };
}

function viaDocumentText(line: string): { text: string | null } | { error: string } {
  try {
    return { text: documentText(line, 'jsonl', 1) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** mulberry32: a seeded generator, so a failing line can be reproduced from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = ['a', 'Z', ' ', '  ', 'é', 'e\u0301', '日本', '😀', '\ud83d', '\u2028', '\u00a0', '\t', '"', '\\', '/', '\n', '\u0001', '\u007f', 'text', '{', '}', ':', ','];
const ESCAPES = ['\\n', '\\t', '\\"', '\\\\', '\\/', '\\b', '\\f', '\\r', '\\u00e9', '\\u0041', '\\ud83d\\ude00', '\\udc00', '\\u2028', '\\u0000', '\\x41', '\\u12', '\\'];
const KEYS = ['text', 'id', 'source', 'meta', 'tex', 'texts', 'Text', '__proto__', 'constructor', 't\\u0065xt', 'te\\"xt', ''];

function generator(seed: number) {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  /** Half the lines are well formed (the pieces that break a line are left out), so both paths are exercised. */
  let clean = false;
  const ok = (p: number) => clean || r() < p;
  const ws = () => (r() < 0.8 ? '' : pick([' ', '\t', '  ', '\r', '\n', '\u00a0']));
  /** A string literal as it may appear in a line: mostly valid, sometimes with a raw control character or a bad escape. */
  const literal = (): string => {
    let s = '"';
    const n = Math.floor(r() * 12);
    for (let i = 0; i < n; i++) {
      if (r() < 0.3) s += clean ? pick(ESCAPES.slice(0, 13)) : pick(ESCAPES);
      else {
        const p = pick(PIECES);
        s += p === '"' || p === '\\' ? (ok(0.9) ? `\\${p}` : p) : (p === '\n' || p === '\t' || p === '\u0001') && ok(0.9) ? JSON.stringify(p).slice(1, -1) : p;
      }
    }
    return ok(0.97) ? `${s}"` : s;
  };
  const value = (depth: number): string => {
    const k = r();
    if (k < 0.35) return literal();
    if (k < 0.45) return pick(['0', '-1', '3.25', '1e5', '-0.5E-3', '12345678901234567890', '01', '1.', '-', '2e'].slice(0, clean ? 6 : 10));
    if (k < 0.52) return pick(['true', 'false', 'null', 'tru', 'nul'].slice(0, clean ? 3 : 5));
    if (k < 0.75 && depth < 5) return object(depth + 1);
    if (depth < 5) return `[${ws()}${Array.from({ length: Math.floor(r() * 4) }, () => value(depth + 1)).join(`${ws()},${ws()}`)}${ws()}]`;
    return literal();
  };
  const object = (depth: number): string => {
    const n = Math.floor(r() * 5);
    const keys = clean ? [...new Set(Array.from({ length: n }, () => pick(KEYS.slice(0, 7))))] : Array.from({ length: n }, () => pick(KEYS));
    const members = keys.map((key) => `${ws()}"${key}"${ws()}:${ws()}${value(depth)}${ws()}`);
    return `{${members.join(',')}}`;
  };
  /** A whole line: usually an object with a `text`, sometimes broken on purpose. */
  return (): string => {
    clean = r() < 0.5;
    const members: string[] = [];
    const n = 1 + Math.floor(r() * 4);
    const textAt = Math.floor(r() * (n + 1));
    const others = clean ? [...new Set(Array.from({ length: n }, () => pick(KEYS.slice(1, 7))))] : Array.from({ length: n }, () => pick(KEYS));
    others.forEach((key, i) => {
      if (i === textAt) members.push(`"text":${ws()}${literal()}`);
      members.push(`${ws()}"${key}"${ws()}:${ws()}${value(1)}`);
    });
    if (textAt >= others.length) members.push(`"text":${ws()}${literal()}`);
    let line = `${ws()}{${members.join(',')}}${ws()}`;
    const m = clean ? 1 : r();
    if (m < 0.05) line = line.slice(0, Math.floor(r() * line.length));
    else if (m < 0.1) {
      const at = Math.floor(r() * line.length);
      line = line.slice(0, at) + pick(PIECES) + line.slice(at);
    } else if (m < 0.12) line = `[${line}]`;
    else if (m < 0.14) line = `${line}x`;
    return line;
  };
}

describe('reading the text of a JSON line without building its object', () => {
  it('agrees with the strict parser on many generated lines, value for value and error for error', () => {
    let fast = 0;
    let valid = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const next = generator(seed);
      for (let i = 0; i < 100; i++) {
        const line = next();
        const expected = strictText(line);
        expect(viaDocumentText(line), `seed ${seed}, line ${i}: ${JSON.stringify(line)}`).toEqual(expected);
        const scanned = scanJsonText(line);
        if ('text' in expected && expected.text !== null) {
          valid++;
          // JSON.parse reads the same text whenever the strict parser accepts the line.
          expect((JSON.parse(line) as { text: string }).text).toBe(expected.text);
          if (scanned !== undefined) fast++;
        }
        // The scanner never answers for a line the strict parser refuses, and never answers differently.
        if (scanned !== undefined) expect(expected).toEqual({ text: scanned });
      }
    }
    expect(valid).toBeGreaterThan(1000);
    // Most valid lines take the fast path; the rest (escaped keys and the like) fall back.
    expect(fast / valid).toBeGreaterThan(0.5);
  });

  it('reads the top-level text only, decodes its escapes, and declines what only the strict parser may judge', () => {
    expect(scanJsonText('{"meta":{"text":"inner"},"text":"outer"}')).toBe('outer');
    expect(scanJsonText('{"text":"a\\nb\\u00e9\\ud83d\\ude00\\/"}')).toBe('a\nbé😀/');
    expect(scanJsonText('{"text":"\\udc00"}')).toBe('\udc00');
    expect(scanJsonText(' {"id":1,"tags":[1,{"a":null},[]],"text":"x"} ')).toBe('x');
    expect(scanJsonText('{"text":"a","text":"b"}')).toBeUndefined();
    expect(scanJsonText('{"meta":{"k":1,"k":2},"text":"a"}')).toBeUndefined();
    expect(scanJsonText('{"t\\u0065xt":"a"}')).toBeUndefined();
    expect(scanJsonText('{"__proto__":{},"text":"a"}')).toBeUndefined();
    expect(scanJsonText('{"text":"a\\u0000"}')).toBeUndefined();
    expect(scanJsonText('{"text":1}')).toBeUndefined();
    expect(scanJsonText('{"id":"no text"}')).toBeUndefined();
    expect(scanJsonText('{"text":"a"} {}')).toBeUndefined();
    expect(scanJsonText(`{"text":"${'x'.repeat(1 << 20)}"}`)).toHaveLength(1 << 20);
    // Duplicates and escaped keys are still refused or read as before, by the strict parser.
    expect(() => documentText('{"text":"a","text":"b"}', 'jsonl', 3)).toThrow(/line 3 is not JSON/);
    expect(documentText('{"t\\u0065xt":"a"}', 'jsonl', 1)).toBe('a');
  });
});
