import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../src/executors/line-splitter.js';
import { parseStrictJson } from '../src/executors/strict-json.js';

describe('strict JSON for trainer lines and files', () => {
  it('agrees with JSON.parse on valid input', () => {
    for (const text of ['{"a":1,"b":[1,{"c":"x:y"}],"d":{"e":null}}', '[]', '"a:b"', '{"k\\"ey:":"v\\\\"}', '{"a":{"a":{"a":1}}}', ' 3 ']) {
      expect(parseStrictJson(text)).toEqual({ ok: true, value: JSON.parse(text) });
    }
  });

  it('refuses duplicate keys at any depth, prototype keys, deep nesting and bad syntax', () => {
    expect(parseStrictJson('{"a":1,"a":2}')).toEqual({ ok: false, reason: 'duplicate_key' });
    expect(parseStrictJson('[{"x":{"b":1,"b":1}}]')).toEqual({ ok: false, reason: 'duplicate_key' });
    expect(parseStrictJson('{"__proto__":{"admin":true}}')).toEqual({ ok: false, reason: 'forbidden_key' });
    expect(parseStrictJson('{"a":{"constructor":{"prototype":1}}}')).toEqual({ ok: false, reason: 'forbidden_key' });
    expect(parseStrictJson(`${'['.repeat(40)}${']'.repeat(40)}`)).toEqual({ ok: false, reason: 'too_deep' });
    expect(parseStrictJson(`${'['.repeat(32)}${']'.repeat(32)}`).ok).toBe(true);
    expect(parseStrictJson('{"a":1,}')).toEqual({ ok: false, reason: 'syntax' });
    expect(parseStrictJson('{"a":1}{"b":2}')).toEqual({ ok: false, reason: 'syntax' });
  });
});

describe('bounded line splitter', () => {
  it('splits across chunks, drops a trailing CR, and reports an over-long line by number without holding it', () => {
    const lines: Array<[string, number]> = [];
    const oversized: number[] = [];
    const splitter = new LineSplitter(8, (l, n) => lines.push([l, n]), (n) => oversized.push(n));
    splitter.push(Buffer.from('ab'));
    splitter.push(Buffer.from('c\r\n12345678\n'));
    splitter.push(Buffer.from('123456789'));
    splitter.push(Buffer.from('0123\nlast'));
    splitter.end();
    expect(lines).toEqual([
      ['abc', 1],
      ['12345678', 2],
      ['last', 4],
    ]);
    expect(oversized).toEqual([3]);
  });

  it('keeps multi-byte characters split between chunks whole', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter(64, (l) => lines.push(l), () => {});
    const bytes = Buffer.from('prüfung ✓\n');
    splitter.push(bytes.subarray(0, 3));
    splitter.push(bytes.subarray(3));
    expect(lines).toEqual(['prüfung ✓']);
  });
});
