import { describe, expect, it } from 'vitest';
import { BandTable } from '../src/band-table.js';
import { SetStore } from '../src/set-store.js';

/**
 * The near-dup index's two compact structures: a band's buckets (a multimap from 32-bit keys to kept ids in one
 * typed array) and the kept documents' shingle sets (appended to large chunks). The planted corpus only shows
 * that verdicts are right; these show that no id is lost or invented across growth, colliding slots and chunk ends.
 */
const bytes = (a: Uint32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
const setOf = (n: number, i: number) => {
  const set = new Uint32Array(n);
  for (let k = 0; k < n; k++) set[k] = (Math.imul(k + 1, i + 3) ^ i) >>> 0;
  return set;
};
const idsOf = (t: BandTable, key: number) => {
  const out: number[] = [];
  t.forEach(key, (id) => out.push(id));
  return out.sort((a, b) => a - b);
};

describe('a band table', () => {
  it('returns every id added under a key, across growth, and none added under another key', () => {
    const t = new BandTable(16);
    const expected = new Map<number, number[]>();
    // Keys that share their low bits (so their slots collide), key 0 and the largest key, several ids per key.
    const keys = [0, 0xffffffff, 1, 1 + (1 << 16), 1 + (1 << 20), 0x80000000, ...Array.from({ length: 3000 }, (_, i) => Math.imul(i + 7, 0x9e3779b1) >>> 0)];
    let id = 0;
    for (let round = 0; round < 3; round++) {
      for (const key of keys) {
        if (round > 0 && key % 3 !== 0) continue;
        t.add(key, id);
        expected.set(key, [...(expected.get(key) ?? []), id]);
        id++;
      }
    }
    expect(t.count).toBe(id);
    for (const [key, ids] of expected) expect(idsOf(t, key)).toEqual(ids);
    expect(idsOf(t, 2)).toEqual([]);
    expect(idsOf(t, 1 + (1 << 17))).toEqual([]);
  });

  it('compares the whole key: keys equal in their low 30 bits are different keys', () => {
    const t = new BandTable();
    t.add(0x40000005, 1);
    t.add(0xc0000005, 2);
    expect(idsOf(t, 5)).toEqual([]);
    expect(idsOf(t, 0x40000005)).toEqual([1]);
    expect(idsOf(t, 0xc0000005)).toEqual([2]);
  });
});

describe('a set store', () => {
  it('gives back each set as added with its ordinal, across chunk ends and for a set larger than a chunk', () => {
    const store = new SetStore();
    const sets: Uint32Array[] = [];
    const chunk = 1 << 20;
    // Sizes that cross a chunk's end, one of exactly a chunk, one larger than a chunk, and empty ones.
    const sizes = [1000, chunk - 500, 700, chunk, 3, chunk + 17, 0, 5000, 12];
    sizes.forEach((n, i) => {
      const set = setOf(n, i);
      sets.push(set);
      expect(store.add(set, 10 * i + 1)).toBe(i);
    });
    // The caller's array may be reused: the store holds a copy.
    sets[0]!.fill(0).set([1, 2, 3]);
    expect(store.count).toBe(sizes.length);
    sets.forEach((set, i) => {
      const got = store.get(i);
      expect(got).toHaveLength(set.length);
      expect(bytes(got).equals(bytes(i === 0 ? setOf(1000, 0) : set)), `set ${i}`).toBe(true);
      expect(store.ordinalOf(i)).toBe(10 * i + 1);
    });
  });
});
