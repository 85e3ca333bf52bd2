import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../src/executors/line-splitter.js';

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
