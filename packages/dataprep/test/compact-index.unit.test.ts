import { describe, expect, it } from 'vitest';
import { BandTable } from '../src/band-table.js';
import { mix32, shingleSet } from '@ito/dataprep';
import { KeptTokens } from '../src/kept-tokens.js';
import { Vocabulary } from '../src/vocabulary.js';

/**
 * The near-dup index's compact structures: a band's buckets (a multimap from 32-bit keys to kept ids in one typed
 * array) and the kept documents' token hashes (vocabulary ids as varints in large chunks). The planted corpus only
 * shows that verdicts are right; these show that no id or token is lost or invented across growth, colliding
 * slots, chunk ends and a full vocabulary.
 */
const bytes32 = (a: Uint32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
const idsOf = (t: BandTable, key: number) => {
  const out: number[] = [];
  t.forEach(key, (id) => out.push(id));
  return out.sort((a, b) => a - b);
};

describe('a band table', () => {
  it('returns every id added under a key, across growth, and none added under another key', () => {
    const t = new BandTable(16);
    const expected = new Map<number, number[]>();
    // Keys that share their top bits (so their slots collide; those at the top wrap round to the first slot), key 0
    // and the largest key, several ids per key.
    const keys = [0, 0xffffffff, 0xffffff00, 0xfffffffe, 0xffffff80, 1, 1 + (1 << 16), 1 + (1 << 20), 0x80000000, ...Array.from({ length: 3000 }, (_, i) => Math.imul(i + 7, 0x9e3779b1) >>> 0)];
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

describe('the kept documents\' tokens', () => {
  it('gives back each document\'s token hashes and ordinal, across chunk ends and for one larger than a chunk', () => {
    const store = new KeptTokens();
    const docs: Uint32Array[] = [];
    // Frequent tokens (1-byte ids) among rare ones (2–3 bytes); sizes that cross a 4 MiB chunk's end, and one
    // document whose bytes alone pass a chunk.
    const sizes = [1000, 1_500_000, 700, 3, 1_600_000, 1, 5000, 2_500_000, 12];
    sizes.forEach((n, i) => {
      const doc = new Uint32Array(n);
      for (let k = 0; k < n; k++) doc[k] = k % 3 === 0 ? k % 50 : mix32(k + 1_000_003 * i);
      docs.push(doc);
      expect(store.add(doc, 10 * i + 1)).toBe(i);
    });
    // The caller's array may be reused: the store holds its own encoding.
    const first = docs[0]!.slice();
    docs[0]!.fill(7);
    docs[0] = first;
    expect(store.count).toBe(sizes.length);
    docs.forEach((doc, i) => {
      expect(bytes32(store.tokens(i)).equals(bytes32(doc)), `document ${i}`).toBe(true);
      expect(store.ordinalOf(i)).toBe(10 * i + 1);
    });
    expect(store.shingles(0, 5)).toEqual(shingleSet(docs[0]!, 5));
  });

  it('past a full vocabulary, tokens are kept by their hash and come back the same', () => {
    const vocabulary = new Vocabulary(100);
    const store = new KeptTokens(vocabulary);
    const doc = Uint32Array.from({ length: 400 }, (_, k) => (k % 2 === 0 ? k % 80 : mix32(k) | 0x80000000) >>> 0);
    store.add(doc, 0);
    expect(vocabulary.count).toBe(100);
    const again = Uint32Array.from(doc).reverse();
    store.add(again, 1);
    expect(vocabulary.count).toBe(100);
    expect(bytes32(store.tokens(0)).equals(bytes32(doc))).toBe(true);
    expect(bytes32(store.tokens(1)).equals(bytes32(again))).toBe(true);
  });

  it('the vocabulary gives each distinct hash one id, in the order first seen, across growth', () => {
    const v = new Vocabulary();
    const hashes = Array.from({ length: 20_000 }, (_, k) => mix32(k + 1));
    expect(hashes.map((h) => v.idOf(h))).toEqual(hashes.map((_, k) => k));
    expect(hashes.map((h) => v.idOf(h))).toEqual(hashes.map((_, k) => k));
    expect(v.count).toBe(hashes.length);
    expect(hashes.map((_, k) => v.hashOf(k))).toEqual(hashes);
    expect(v.idOf(0)).toBe(20_000);
    expect(v.idOf(0xffffffff)).toBe(20_001);
  });
});
