import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DataPrep,
  DataPrepParamsError,
  DocumentError,
  candidateProbability,
  documentText,
  impliedThreshold,
  linesOf,
  parseBattery,
  resolveParams,
  windowHashes,
  type Verdict,
} from '@ito/dataprep';
import type { Planted } from '../../../test/fixtures/dataprep/generator.js';

const fixture = (path: string) => readFileSync(new URL(`../../../test/fixtures/${path}`, import.meta.url), 'utf8');
const battery = parseBattery('ito-evals/v1', fixture('evals/ito-evals/v1.jsonl'));
const corpus = fixture('dataprep/corpus.jsonl').trimEnd().split('\n');
const truth = JSON.parse(fixture('dataprep/corpus.truth.json')) as Planted[];

async function prepareFixture(): Promise<Verdict[]> {
  const prep = await DataPrep.create(battery);
  return corpus.map((line, i) => prep.consider(documentText(line, 'jsonl', i + 1)!));
}

describe('the data-prep passes on the planted corpus', () => {
  it('the battery has a few hundred items across its tasks', () => {
    expect(battery.items.length).toBe(320);
    expect(new Set(battery.items.map((i) => i.task))).toEqual(new Set(['mmlu', 'gsm8k', 'humaneval', 'ifeval', 'ruler_32k']));
  });

  it('removes exactly the planted exact duplicates, near duplicates and leaks, and no clean document', async () => {
    const verdicts = await prepareFixture();
    const count = (kind: Planted['kind']) => truth.filter((t) => t.kind === kind).length;
    const removedBy = (reason: string) => verdicts.filter((v) => !v.kept && v.reason === reason).length;
    expect(removedBy('exact')).toBe(count('exact'));
    expect(removedBy('near')).toBe(count('near'));
    expect(removedBy('decontamination')).toBe(count('leak'));
    // Every document planted as one kind is removed for that reason and keeps the right keeper.
    verdicts.forEach((v, i) => {
      const t = truth[i]!;
      if (t.kind === 'clean' || t.kind === 'similar' || t.kind === 'near_miss') expect(v, `document ${i} (${t.kind})`).toEqual({ ordinal: i, kept: true });
      if (t.kind === 'exact') expect(v).toEqual({ ordinal: i, kept: false, reason: 'exact', duplicate_of: t.of });
      if (t.kind === 'near') expect(v).toMatchObject({ ordinal: i, kept: false, reason: 'near', duplicate_of: t.of, jaccard: t.jaccard });
      if (t.kind === 'leak') expect(v).toEqual({ ordinal: i, kept: false, reason: 'decontamination', items: t.items });
    });
    // The corpus plants every kind the test is about, several times.
    for (const kind of ['exact', 'near', 'similar', 'leak', 'near_miss'] as const) expect(count(kind)).toBeGreaterThanOrEqual(10);
  });

  it('summarises what it removed, the battery items at risk and the method with its parameters', async () => {
    const prep = await DataPrep.create(battery);
    corpus.forEach((line, i) => prep.consider(documentText(line, 'jsonl', i + 1)!));
    const s = prep.summary();
    const leaked = [...new Set(truth.flatMap((t) => (t.kind === 'leak' ? t.items : [])))].sort();
    expect(s.docs_in).toBe(400);
    expect(s.docs_out).toBe(truth.filter((t) => ['clean', 'similar', 'near_miss'].includes(t.kind)).length);
    expect(s.contaminated_items).toEqual(leaked);
    expect(s.contaminated_fraction).toBe(truth.filter((t) => t.kind === 'leak').length / 400);
    expect(s.method.decontamination).toBe('13-gram-overlap');
    expect(s.method.params.near).toMatchObject({ shingle_words: 5, permutations: 100, bands: 20, rows: 5, jaccard_threshold: 0.8 });
    expect(s.method.implied_threshold).toBeCloseTo(0.5493, 4);
  });

  it('is deterministic: the same input gives the same verdicts', async () => {
    expect(await prepareFixture()).toEqual(await prepareFixture());
  });
});

describe('each pass on its own', () => {
  const doc = 'Alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon';

  it('exact dedup: NFC, white space and (when configured) case give one document', async () => {
    const prep = await DataPrep.create(battery);
    expect(prep.consider('café au lait').kept).toBe(true);
    expect(prep.consider('cafe\u0301   au\tlait ')).toMatchObject({ kept: false, reason: 'exact', duplicate_of: 0 });
    // Case matters to the exact hash unless case_fold is on (shingles are always case-folded, so near dedup takes it).
    expect(prep.consider('CAFÉ AU LAIT')).toMatchObject({ kept: false, reason: 'near', duplicate_of: 0 });
    const folded = await DataPrep.create(battery, { normalization: { case_fold: true } });
    folded.consider('café au lait');
    expect(folded.consider('CAFÉ AU LAIT')).toMatchObject({ kept: false, reason: 'exact' });
  });

  it('near dedup: an edited copy above the threshold goes, one below it stays, and the earliest is kept', async () => {
    const prep = await DataPrep.create(battery, { near: { jaccard_threshold: 0.6 } });
    const words = Array.from({ length: 60 }, (_, i) => `w${i}`);
    const one = words.join(' ');
    const twoEdits = words.map((w, i) => (i === 20 || i === 40 ? 'edited' : w)).join(' ');
    const manyEdits = words.map((w, i) => (i % 6 === 0 ? `x${i}` : w)).join(' ');
    expect(prep.consider(one).kept).toBe(true);
    const near = prep.consider(twoEdits);
    expect(near).toMatchObject({ kept: false, reason: 'near', duplicate_of: 0 });
    expect((near as { jaccard: number }).jaccard).toBeCloseTo(46 / 66, 6); // 56 shingles, 10 of them changed
    expect(prep.consider(manyEdits).kept).toBe(true);
  });

  it('decontamination: 13 tokens of an item in a row is a leak, 12 is not, and case and punctuation do not hide it', async () => {
    const item = battery.items.find((i) => i.task === 'gsm8k')!;
    const tokens = item.text.toLowerCase().match(/[\p{L}\p{N}]+/gu)!;
    const prep = await DataPrep.create(battery);
    expect(prep.consider(`${doc} ${tokens.slice(0, 12).join(' ')} ${doc}`).kept).toBe(true);
    expect(prep.consider(`${doc}, ${tokens.slice(2, 15).join(', ').toUpperCase()}; ${doc}`)).toEqual({ ordinal: 1, kept: false, reason: 'decontamination', items: [item.id] });
  });

  it('an item shorter than n tokens is found whole', async () => {
    const short = parseBattery('b/v1', '{"id":"s-1","task":"t","text":"what is two plus two"}\n');
    const prep = await DataPrep.create(short);
    expect(prep.consider('someone asked what is two plus two today')).toMatchObject({ kept: false, items: ['s-1'] });
    expect(prep.consider('someone asked what is two plus three')).toMatchObject({ kept: true });
  });
});

describe('parameters and inputs', () => {
  it('the rolling window hash equals the hash of each window computed afresh', () => {
    const hashes = Uint32Array.from({ length: 40 }, (_, i) => (Math.imul(i + 1, 0x9e3779b1) >>> 0));
    for (const n of [1, 5, 13, 40]) {
      const rolled = windowHashes(hashes, n, 7);
      expect(rolled).toHaveLength(41 - n);
      for (let i = 0; i < rolled.length; i++) expect(rolled[i]).toBe(windowHashes(hashes.slice(i, i + n), n, 7)[0]);
    }
    expect(windowHashes(hashes, 41, 7)).toHaveLength(0);
  });

  it('states the banding threshold (1/b)^(1/r) and refuses inconsistent parameters', () => {
    expect(impliedThreshold(20, 5)).toBeCloseTo(0.5493, 4);
    expect(candidateProbability(0.8, 20, 5)).toBeGreaterThan(0.999);
    expect(() => resolveParams({ near: { bands: 10 } })).toThrow(DataPrepParamsError);
    expect(() => resolveParams({ decontamination: { ngram: 0 } })).toThrow(DataPrepParamsError);
    expect(resolveParams({ near: { bands: 10, rows: 10, permutations: 100 } }).near.bands).toBe(10);
  });

  it('splits a byte stream into lines across chunk boundaries, multi-byte characters included', async () => {
    const bytes = Buffer.from('één\r\ntwee\n\ndrie');
    const chunks = async function* () {
      for (let i = 0; i < bytes.length; i += 3) yield bytes.subarray(i, i + 3);
    };
    const lines: string[] = [];
    for await (const l of linesOf(chunks())) lines.push(l);
    expect(lines).toEqual(['één', 'twee', '', 'drie']);
  });

  it('refuses a line over the bound, invalid UTF-8, and JSON lines without one string text, never quoting them', async () => {
    const once = (b: Uint8Array) => (async function* () { yield b; })();
    const drain = async (it: AsyncIterable<string>) => { for await (const _ of it) void _; };
    await expect(drain(linesOf(once(Buffer.from('x'.repeat(100))), 50))).rejects.toThrow(DocumentError);
    await expect(drain(linesOf(once(Buffer.from([0x61, 0xff, 0x0a]))))).rejects.toThrow(/not valid UTF-8/);
    expect(() => documentText('{"text":"a","text":"b"}', 'jsonl', 3)).toThrow(/line 3 is not JSON/);
    expect(() => documentText('{"__proto__":{},"text":"a"}', 'jsonl', 1)).toThrow(DocumentError);
    expect(() => documentText('{"body":"secret-looking"}', 'jsonl', 1)).toThrow(/no string "text"/);
    expect(() => documentText('{"body":"secret-looking"}', 'jsonl', 1)).not.toThrow(/secret-looking/);
    expect(documentText('   ', 'jsonl', 1)).toBeNull();
    expect(documentText('plain words', 'text', 1)).toBe('plain words');
  });

  it('refuses a battery file with a malformed or repeated item', () => {
    expect(() => parseBattery('b', '{"id":"a","task":"t","text":"x"}\n{"id":"a","task":"t","text":"y"}')).toThrow(/repeats/);
    expect(() => parseBattery('b', '{"id":"a","task":"t","text":"x","extra":1}')).toThrow(/exactly the keys/);
    expect(() => parseBattery('b', '')).toThrow(/no items/);
  });
});
