import { describe, expect, it } from 'vitest';
import { DataPrep, NearDeduper, createTokenHasher, hashTokens, jaccard, mix32, normalizeText, parseBattery, resolveParams, shingleSet, wordTokens } from '@ito/dataprep';

/**
 * The passes' edges the planted corpus passes over: Unicode and case rules of the exact hash, documents with no
 * word at all, exact Jaccard values, items sharing a gram, and the LSH banding really filtering candidates (the
 * verdicts alone cannot show it: every candidate is confirmed on exact Jaccard).
 */
const battery = parseBattery('b/v1', '{"id":"x-1","task":"t","text":"nothing in this battery item appears in the documents of these tests"}\n');
const words = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** A text's word-token hashes: what near dedup takes. */
async function tokenized(text: string): Promise<Uint32Array> {
  const hasher = await createTokenHasher();
  return hashTokens(wordTokens(normalizeText(text, resolveParams({}).normalization)), hasher);
}

async function shingled(text: string): Promise<Uint32Array> {
  return shingleSet(await tokenized(text), 5);
}

describe('normalisation', () => {
  it('normalises to NFC text with no ASCII character at all', async () => {
    const prep = await DataPrep.create(battery);
    expect(prep.consider('\u03ac').kept).toBe(true); // ά, precomposed
    expect(prep.consider('\u03b1\u0301')).toEqual({ ordinal: 1, kept: false, reason: 'exact', duplicate_of: 0 }); // α + combining acute
  });

  it('case folds to lower case: ß and SS stay different words', async () => {
    const prep = await DataPrep.create(battery, { normalization: { case_fold: true } });
    expect(prep.consider('straße').kept).toBe(true);
    expect(prep.consider('STRASSE')).toEqual({ ordinal: 1, kept: true });
    expect(prep.consider('STRASSE')).toEqual({ ordinal: 2, kept: false, reason: 'exact', duplicate_of: 1 });
    expect(wordTokens('Straße')).toEqual(['straße']);
  });

  it('word tokens are lower case, so ß and ss make different shingles', async () => {
    const prep = await DataPrep.create(battery);
    const a = words('w', 40).map((w, i) => (i % 4 === 0 ? 'straße' : w)).join(' ');
    const b = words('w', 40).map((w, i) => (i % 4 === 0 ? 'strasse' : w)).join(' ');
    expect(prep.consider(a).kept).toBe(true);
    expect(prep.consider(b)).toEqual({ ordinal: 1, kept: true });
  });

  it('a document with no word at all has no token and no shingle, and is nobody`s near duplicate', async () => {
    expect(wordTokens('!!! ???')).toEqual([]);
    expect(await shingled('!!! ???')).toHaveLength(0);
    const prep = await DataPrep.create(battery);
    expect(prep.consider('!!!')).toEqual({ ordinal: 0, kept: true });
    expect(prep.consider('???')).toEqual({ ordinal: 1, kept: true });
    expect(prep.consider('...')).toEqual({ ordinal: 2, kept: true });
  });
});

describe('shingles and Jaccard', () => {
  it('a shingle set is sorted and distinct', () => {
    const tokens = Uint32Array.from([1, 2, 1, 2, 1, 2, 1]);
    const set = shingleSet(tokens, 2);
    expect(set).toHaveLength(2);
    expect(set[0]).toBeLessThan(set[1]!);
    // Repeats that sort next to a different shingle are still dropped: as many shingles as distinct windows.
    expect(shingleSet(Uint32Array.from([1, 2, 1, 2]), 2)).toHaveLength(2);
    expect(shingleSet(Uint32Array.from([1, 2, 3, 1, 2]), 2)).toHaveLength(3);
    expect(shingleSet(Uint32Array.from([4, 4, 4, 4]), 2)).toHaveLength(1);
    expect(shingleSet(Uint32Array.from([5, 6, 7]), 3)).toHaveLength(1);
    expect(shingleSet(Uint32Array.from([5, 6, 7]), 9)).toEqual(shingleSet(Uint32Array.from([5, 6, 7]), 3));
  });

  it('Jaccard is |A ∩ B| / |A ∪ B|, 1 for two empty sets and 0 for an empty and a non-empty one', () => {
    expect(jaccard(Uint32Array.from([1, 3, 5, 7]), Uint32Array.from([1, 2, 3]))).toBe(2 / 5);
    expect(jaccard(Uint32Array.from([2, 4]), Uint32Array.from([1, 2, 3, 4, 5]))).toBe(2 / 5);
    expect(jaccard(new Uint32Array(0), new Uint32Array(0))).toBe(1);
    expect(jaccard(new Uint32Array(0), Uint32Array.from([1]))).toBe(0);
    expect(jaccard(Uint32Array.from([1]), new Uint32Array(0))).toBe(0);
  });

  it('mix32 is the murmur3 finaliser', () => {
    expect(mix32(0)).toBe(0);
    expect(mix32(1)).toBe(0x514e28b7);
    expect(mix32(2)).toBe(0x30f4c306);
    expect(mix32(0xdeadbeef)).toBe(0x0de5c6a9);
  });
});

describe('near dedup', () => {
  it('a pair exactly at the threshold is a near duplicate', async () => {
    const one = words('w', 60);
    const two = one.map((w, i) => (i === 20 || i === 40 ? 'edited' : w));
    const exact = jaccard(await shingled(one.join(' ')), await shingled(two.join(' ')));
    expect(exact).toBe(46 / 66);
    const prep = await DataPrep.create(battery, { near: { jaccard_threshold: 46 / 66 } });
    prep.consider(one.join(' '));
    expect(prep.consider(two.join(' '))).toEqual({ ordinal: 1, kept: false, reason: 'near', duplicate_of: 0, jaccard: 46 / 66 });
  });

  it('LSH banding: unrelated documents are never compared, a near copy is one candidate, a look-alike below the threshold a false one', async () => {
    const near = new NearDeduper(resolveParams({}).near);
    for (let d = 0; d < 30; d++) expect(near.consider(d, await tokenized(words(`d${d}x`, 50).join(' ')))).toBeNull();
    // One-word documents: one shingle each, so their MinHash values are independent; no band of 5 rows can agree.
    for (let d = 0; d < 40; d++) expect(near.consider(100 + d, await tokenized(`solo${d}`))).toBeNull();
    expect(near.candidatesVerified).toBe(0);
    expect(near.falseCandidates).toBe(0);
    const base = words('d3x', 50);
    const copy = base.map((w, i) => (i === 25 ? 'changed' : w));
    expect(near.consider(30, await tokenized(copy.join(' ')))).toEqual({ duplicate_of: 3, jaccard: 41 / 51 });
    expect(near.candidatesVerified).toBe(1);
    expect(near.falseCandidates).toBe(0);
    // Two words edited far apart: Jaccard 36/56, under the 0.8 threshold but over the banding's 0.55.
    const lookalike = base.map((w, i) => (i === 10 || i === 35 ? `edit${i}` : w));
    expect(jaccard(await shingled(lookalike.join(' ')), await shingled(base.join(' ')))).toBe(36 / 56);
    expect(near.consider(31, await tokenized(lookalike.join(' ')))).toBeNull();
    expect(near.candidatesVerified).toBe(2);
    expect(near.falseCandidates).toBe(1);
  });

  it('a document near two kept ones is the duplicate of the earlier, whichever band finds the later first', async () => {
    const a = words('w', 60);
    const b = a.map((w, i) => ([10, 25, 40, 55].includes(i) ? `b${i}` : w)); // Jaccard 0.47 with a: kept
    const c = a.map((w, i) => ([10, 40].includes(i) ? `b${i}` : w)); // 46/66 with a and with b
    // With seed 8 the banding meets b before a: the candidates must be verified in input order.
    const near = new NearDeduper({ ...resolveParams({}).near, jaccard_threshold: 0.6, seed: 8 });
    expect(near.consider(0, await tokenized(a.join(' ')))).toBeNull();
    expect(near.consider(1, await tokenized(b.join(' ')))).toBeNull();
    expect(near.consider(2, await tokenized(c.join(' ')))).toEqual({ duplicate_of: 0, jaccard: 46 / 66 });
  });

  it('every kept document in a bucket stays a candidate, the second and later ones too', async () => {
    // One band of one row: documents share a bucket exactly when their single MinHash value is equal.
    const near = new NearDeduper({ ...resolveParams({}).near, bands: 1, rows: 1, permutations: 1, jaccard_threshold: 1 });
    const a = words('w', 60);
    const b = [...a, 'extra']; // one shingle more: 56/57, kept under a threshold of 1
    expect(near.consider(0, await tokenized(a.join(' ')))).toBeNull();
    expect(near.consider(1, await tokenized(b.join(' ')))).toBeNull();
    expect([near.candidatesVerified, near.falseCandidates]).toEqual([1, 1]);
    expect(near.consider(2, await tokenized(a.join(' ')))).toEqual({ duplicate_of: 0, jaccard: 1 });
    expect(near.consider(3, await tokenized(b.join(' ')))).toEqual({ duplicate_of: 1, jaccard: 1 });
    expect([near.candidatesVerified, near.falseCandidates]).toEqual([4, 2]);
  });

  it('a document with no token (so no shingle) is never indexed nor matched', async () => {
    const near = new NearDeduper(resolveParams({}).near);
    expect(near.consider(0, new Uint32Array(0))).toBeNull();
    expect(near.consider(1, new Uint32Array(0))).toBeNull();
    expect(near.consider(2, await tokenized('!!! ???'))).toBeNull();
    expect(near.candidatesVerified).toBe(0);
  });
});

describe('decontamination', () => {
  const gram = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu';

  it('two items sharing a gram are both found by a document containing it', async () => {
    const shared = parseBattery('b/v1', `{"id":"a-1","task":"t","text":"${gram} first"}\n{"id":"a-2","task":"t","text":"second ${gram}"}\n{"id":"a-3","task":"t","text":"third ${gram} again"}\n`);
    const prep = await DataPrep.create(shared);
    expect(prep.consider(`some words then ${gram} and more`)).toEqual({ ordinal: 0, kept: false, reason: 'decontamination', items: ['a-1', 'a-2', 'a-3'] });
  });

  it('an item with no word in it matches no document', async () => {
    const punct = parseBattery('b/v1', '{"id":"p-1","task":"t","text":"?!"}\n');
    const prep = await DataPrep.create(punct);
    expect(prep.consider('any document at all')).toEqual({ ordinal: 0, kept: true });
    expect(prep.consider('?!')).toEqual({ ordinal: 1, kept: true });
  });
});
