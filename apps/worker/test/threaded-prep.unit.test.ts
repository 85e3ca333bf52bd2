import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DataPrep, DocAnalyzer, createTokenHasher, documentText, exactDigest, normalizeText, parseBattery, resolveParams, type Verdict } from '@ito/dataprep';
import { packAnalyses, transferables, unpackAnalyses } from '../src/dataprep-threads/packed.js';
import { ThreadedDataPrep } from '../src/dataprep-threads/threaded-prep.js';

const fixture = (path: string) => readFileSync(new URL(`../../../test/fixtures/${path}`, import.meta.url), 'utf8');
const battery = parseBattery('ito-evals/v1', fixture('evals/ito-evals/v1.jsonl'));
const texts = fixture('dataprep/corpus.jsonl')
  .trimEnd()
  .split('\n')
  .map((line, i) => documentText(line, 'jsonl', i + 1)!);

const digestOf = (text: string) => exactDigest(normalizeText(text, resolveParams().normalization));

async function threaded(threads: number, sizes: readonly number[]): Promise<{ verdicts: Verdict[]; summary: unknown }> {
  const prep = await ThreadedDataPrep.create(battery, threads);
  try {
    await prep.ready(); // answers an empty batch per thread: no ordinal is taken
    // Every batch submitted at once, of sizes that use different threads (a one-document batch only the first), so
    // a later batch can be analysed before an earlier one: the decisions must still follow the submissions.
    const batches: Promise<Verdict[]>[] = [];
    for (let i = 0, k = 0; i < texts.length; k++) {
      const size = sizes[k % sizes.length]!;
      const batch = texts.slice(i, i + size);
      batches.push(prep.considerDigested(batch.map(digestOf), (k) => batch[k]!));
      i += size;
    }
    const verdicts = (await Promise.all(batches)).flat();
    return { verdicts, summary: prep.summary() };
  } finally {
    await prep.close();
  }
}

describe('data prep on worker threads', () => {
  it('gives the verdicts and summary of the single-threaded passes, whatever the thread count and batch size', async () => {
    const prep = await DataPrep.create(battery);
    const expected = texts.map((t) => prep.consider(t));
    const removed = (reason: string) => expected.filter((v) => !v.kept && v.reason === reason).length;
    // The fixture has what could go wrong across threads: near duplicates of earlier documents and leaks.
    expect(removed('near')).toBeGreaterThan(10);
    expect(removed('decontamination')).toBeGreaterThan(10);
    expect(removed('exact')).toBeGreaterThan(10);
    for (const [threads, sizes] of [
      [1, [64]],
      [3, [37, 1, 5, 0]],
    ] as const) {
      const got = await threaded(threads, sizes);
      expect(got.verdicts).toEqual(expected);
      expect(got.summary).toEqual(prep.summary());
    }
  }, 120_000);

  it('decides exact duplicates from their digests alone, reads only the other texts, and gives the verdicts of the single-threaded passes', async () => {
    const one = await DataPrep.create(battery);
    const expected = texts.map((t) => one.consider(t));
    const digests = texts.map(digestOf);
    const prep = await ThreadedDataPrep.create(battery, 3);
    try {
      const read: number[] = [];
      const batches: Promise<Verdict[]>[] = [];
      for (const [i, size] of [[0, 37], [37, 1], [38, 0], [38, texts.length]] as const) {
        batches.push(prep.considerDigested(digests.slice(i, i + size), (k) => (read.push(i + k), texts[i + k]!)));
      }
      expect((await Promise.all(batches)).flat()).toEqual(expected);
      expect(prep.summary()).toEqual(one.summary());
      const notExact = expected.flatMap((v, d) => (!v.kept && v.reason === 'exact' ? [] : [d]));
      expect(read).toEqual(notExact);
      expect(prep.sentToThreads).toBe(notExact.length);
    } finally {
      await prep.close();
    }
  }, 120_000);

  it('a batch of analyses packed into a few transferred buffers comes back whole, empty and contaminated documents included', async () => {
    const analyzer = new DocAnalyzer(resolveParams(), battery, await createTokenHasher());
    const analyses = ['', '!!!', ...texts.slice(0, 60)].map((t) => analyzer.analyze(t));
    expect(analyses.some((a) => a.items.length > 0 && a.tokens.length === 0)).toBe(true);
    const packed = packAnalyses(analyses);
    expect(transferables(packed)).toHaveLength(6);
    const sent = structuredClone(packed, { transfer: transferables(packed) });
    expect(packed.tokens.byteLength).toBe(0); // transferred, not copied
    expect(unpackAnalyses(sent)).toEqual(analyses);
    expect(unpackAnalyses(packAnalyses([]))).toEqual([]);
  });
});
