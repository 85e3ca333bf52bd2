import { describe, expect, it } from 'vitest';
import { mix32 } from '@ito/dataprep';
import { OnePermutationMinHash } from '../src/minhash.js';

/**
 * One-permutation MinHash with densification must be what LSH banding assumes of MinHash: each signature position
 * of two sets agrees with probability their Jaccard similarity, empty bins included.
 */
let next = 1;
const fresh = () => mix32(next++);
/** Two sets of `size` shingles sharing `common`: Jaccard common / (2·size − common). */
function pair(size: number, common: number): [Uint32Array, Uint32Array] {
  const shared = Array.from({ length: common }, fresh);
  const a = Uint32Array.from([...shared, ...Array.from({ length: size - common }, fresh)]).sort();
  const b = Uint32Array.from([...shared, ...Array.from({ length: size - common }, fresh)]).sort();
  return [a, b];
}
const agreement = (x: Uint32Array, y: Uint32Array) => x.reduce((n, v, i) => n + (v === y[i] ? 1 : 0), 0) / x.length;

describe('one-permutation MinHash', () => {
  it('agrees on a position with probability the Jaccard similarity, for dense and for sparse sets', () => {
    const mh = new OnePermutationMinHash(100, 0x1705);
    // 150 shingles leave about a fifth of 100 bins empty, 40 more than half: densification carries the estimate.
    for (const size of [150, 40]) {
      for (const j of [0.2, 0.5, 0.8]) {
        const common = Math.round((2 * size * j) / (1 + j));
        const exact = common / (2 * size - common);
        let sum = 0;
        const pairs = 300;
        for (let p = 0; p < pairs; p++) {
          const [a, b] = pair(size, common);
          const sa = mh.sign(a).slice();
          sum += agreement(sa, mh.sign(b));
        }
        expect(Math.abs(sum / pairs - exact), `size ${size}, Jaccard ${exact.toFixed(3)}`).toBeLessThan(0.02);
      }
    }
  });

  it('fills every bin with a value of a bin the set filled; the same set gives the same signature', () => {
    const mh = new OnePermutationMinHash(100, 7);
    const set = Uint32Array.from({ length: 10 }, fresh).sort();
    const sig = mh.sign(set).slice();
    const distinct = new Set(sig);
    expect(distinct.size).toBeLessThanOrEqual(10);
    expect(distinct.size).toBeGreaterThan(5);
    mh.sign(Uint32Array.from({ length: 500 }, fresh)); // another set in between: nothing of it is left over
    expect(mh.sign(set)).toEqual(sig);
    // One shingle: one filled bin, every bin its value.
    expect(new Set(mh.sign(Uint32Array.of(12345))).size).toBe(1);
  });

  it('a very sparse set falls back to the nearest filled bin, consistently', () => {
    const mh = new OnePermutationMinHash(65536, 3);
    const two = Uint32Array.from([fresh(), fresh()]).sort();
    const sig = mh.sign(two).slice();
    expect(new Set(sig).size).toBe(2);
    expect(mh.sign(two)).toEqual(sig);
    expect(() => new OnePermutationMinHash(65537, 0)).toThrow(RangeError);
    expect(() => new OnePermutationMinHash(0, 0)).toThrow(RangeError);
  });
});
