/**
 * Random JSON lines for the line readers' tests: half well formed (objects with a `text` among other keys, escapes,
 * nesting, white space), half broken on purpose (raw control characters, bad escapes, duplicate and prototype keys,
 * cut short, wrapped, trailing junk). Seeded, so a failing line can be reproduced from its seed.
 */
import { rngOf } from '../../../test/fixtures/dataprep/generator.js';

const PIECES = ['a', 'Z', ' ', '  ', 'é', 'e\u0301', '日本', '😀', '\ud83d', '\u2028', '\u00a0', '\t', '"', '\\', '/', '\n', '\u0001', '\u007f', 'text', '{', '}', ':', ','];
const ESCAPES = ['\\n', '\\t', '\\"', '\\\\', '\\/', '\\b', '\\f', '\\r', '\\u00e9', '\\u0041', '\\ud83d\\ude00', '\\udc00', '\\u2028', '\\u0000', '\\x41', '\\u12', '\\'];
const KEYS = ['text', 'id', 'source', 'meta', 'tex', 'texts', 'Text', '__proto__', 'constructor', 't\\u0065xt', 'te\\"xt', ''];

export function jsonLineGenerator(seed: number): () => string {
  const r = rngOf(seed);
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
