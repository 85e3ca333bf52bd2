import { describe, expect, it } from 'vitest';
import { ExactDeduper, exactDigest } from '@ito/dataprep';
import { rngOf } from '../../../test/fixtures/dataprep/generator.js';
import { digestOf } from '../src/exact-dedup.js';
import { fingerprintOf } from '../src/fingerprint.js';

/** A digest-shaped key: 16 characters, one a byte, the first `shared` of them the same for every key. */
function keyOf(r: () => number, shared = 0): string {
  let key = '\u0007'.repeat(shared);
  while (key.length < 16) key += String.fromCharCode(Math.floor(r() * 256));
  return key;
}

describe('exact dedup', () => {
  it('answers as a Map of first ordinals would, across the table growing many times', () => {
    const r = rngOf(17);
    const dedup = new ExactDeduper();
    const firsts = new Map<string, number>();
    const seen: string[] = [];
    for (let ordinal = 0; ordinal < 200_000; ordinal++) {
      // A third are repeats of an earlier key, some of them from long before.
      const key = seen.length > 0 && r() < 0.33 ? seen[Math.floor(r() * seen.length)]! : keyOf(r);
      seen.push(key);
      const expected = firsts.get(key) ?? null;
      if (expected === null) firsts.set(key, ordinal);
      const got = dedup.considerDigest(ordinal, key);
      if (got !== expected) expect(got, `ordinal ${ordinal}`).toBe(expected);
    }
    expect(dedup.distinct).toBe(firsts.size);
  });

  it('tells apart digests that differ only past the words that choose their slot', () => {
    const r = rngOf(5);
    const dedup = new ExactDeduper();
    const keys = Array.from({ length: 5_000 }, () => keyOf(r, 12));
    keys.forEach((key, i) => expect(dedup.considerDigest(i, key)).toBeNull());
    keys.forEach((key, i) => expect(dedup.considerDigest(keys.length + i, key)).toBe(i));
    expect(dedup.distinct).toBe(keys.length);
  });

  it('keys a digest by the fingerprint of the normalised text, whether given as a string or as its UTF-8', () => {
    const text = 'café, naïve and 日本';
    expect(exactDigest(text)).toBe(fingerprintOf(Buffer.from(text, 'utf8')));
    expect(exactDigest(text)).not.toBe(exactDigest(`${text} `));
    expect(digestOf(Buffer.from(text, 'utf8'))).toBe(exactDigest(text));
    const dedup = new ExactDeduper();
    expect(dedup.consider(0, text)).toBeNull();
    expect(dedup.considerDigest(1, digestOf(Buffer.from(text, 'utf8')))).toBe(0);
  });

  it('refuses what is not a digest, or a negative ordinal, and keeps nothing of it', () => {
    const dedup = new ExactDeduper();
    expect(() => dedup.considerDigest(0, 'short')).toThrow(RangeError);
    expect(() => dedup.considerDigest(-1, exactDigest('a'))).toThrow(RangeError);
    expect(dedup.distinct).toBe(0);
    expect(dedup.considerDigest(0, exactDigest('a'))).toBeNull();
  });
});
