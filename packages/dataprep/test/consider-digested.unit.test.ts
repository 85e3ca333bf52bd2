import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DataPrep, byteLineBatchesOf, decodeLine, documentText, lineDigest, parseBattery, resolveParams } from '@ito/dataprep';

const fixture = (path: string) => readFileSync(new URL(`../../../test/fixtures/${path}`, import.meta.url), 'utf8');
const battery = parseBattery('ito-evals/v1', fixture('evals/ito-evals/v1.jsonl'));
const corpus = fixture('dataprep/corpus.jsonl');

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

describe('a document decided from its line’s exact digest', () => {
  it('gets the verdict and summary `consider` gives its text, and an exact duplicate’s text is never asked for', async () => {
    const byText = await DataPrep.create(battery);
    const expected = corpus
      .trimEnd()
      .split('\n')
      .map((line, i) => byText.consider(documentText(line, 'jsonl', i + 1)!));
    const prep = await DataPrep.create(battery);
    const got = [];
    let lineNo = 0;
    let read = 0;
    for await (const batch of byteLineBatchesOf(once(Buffer.from(corpus)))) {
      for (const line of batch) {
        const digest = lineDigest(line, 'jsonl', ++lineNo, resolveParams().normalization)!;
        got.push(prep.considerDigested(digest, () => (read++, documentText(decodeLine(line), 'jsonl', lineNo)!)));
      }
    }
    expect(got).toEqual(expected);
    expect(prep.summary()).toEqual(byText.summary());
    expect(prep.summary().removed.exact).toBeGreaterThan(10);
    expect(read).toBe(expected.length - prep.summary().removed.exact);
  });

  it('decodes a line as the string reader does: a leading byte-order mark is dropped', () => {
    expect(decodeLine(Buffer.from('\ufeff{"text":"x"}'))).toBe('{"text":"x"}');
    expect(decodeLine(Buffer.from('a\ufeffb'))).toBe('a\ufeffb');
  });
});
