import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DataPrep, ReadBudget, documentText, lineBatchesOf, parseBattery, type Verdict } from '@ito/dataprep';
import { ThreadedDataPrep } from '../src/dataprep-threads/threaded-prep.js';
import { keptChunks, type Removal } from '../src/stages/kept-lines.js';

const fixture = (path: string) => readFileSync(new URL(`../../../test/fixtures/${path}`, import.meta.url), 'utf8');
const battery = parseBattery('ito-evals/v1', fixture('evals/ito-evals/v1.jsonl'));
const corpus = fixture('dataprep/corpus.jsonl').trimEnd().split('\n');
// The fixture's lines with what the byte path must read as the string path did: blank lines, CRLF ends, a line
// that a byte-order mark starts (dropped from its output, as the string reader drops it), an escaped text, and
// exact duplicates of each.
const extra = ['\ufeff{"text":"a line the byte-order mark starts"}', '{"text":"escaped \\u00e9 text"}'];
const lines = [...corpus.slice(0, 200), '', ...extra, '   ', ...corpus.slice(100, 150), ...extra.map((l) => `${l}\r`), ...corpus.slice(200)];
const shard = Buffer.from(`${lines.join('\n')}\n`);

/** The shard in small chunks, so lines are split across them. */
async function* chunksOf(bytes: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/** What the worker wrote before the byte path: the string reader, `DataPrep.consider`, kept lines as decoded. */
async function stringPath(): Promise<{ out: string; removals: Removal[]; summary: unknown }> {
  const prep = await DataPrep.create(battery);
  let out = '';
  const removals: Removal[] = [];
  let lineNo = 0;
  for await (const batch of lineBatchesOf(chunksOf(shard, 4096))) {
    for (const line of batch) {
      const text = documentText(line, 'jsonl', ++lineNo);
      if (text === null) continue;
      const v: Verdict = prep.consider(text);
      if (v.kept) out += `${line}\n`;
      else {
        const { kept: _k, ...rest } = v;
        removals.push({ shard: 0, line: lineNo, ...rest });
      }
    }
  }
  return { out, removals, summary: prep.summary() };
}

describe("the worker's kept lines of a shard", () => {
  it('decides exact duplicates from the lines’ bytes and sends only the others to the threads, with the same output, removals and summary', async () => {
    const expected = await stringPath();
    const prep = await ThreadedDataPrep.create(battery, 2);
    try {
      const removals: Removal[] = [];
      const out: Buffer[] = [];
      for await (const chunk of keptChunks({
        prep,
        chunks: chunksOf(shard, 1000),
        format: 'jsonl',
        shardNo: 0,
        documents: new ReadBudget(1e9, 'documents'),
        signal: undefined,
        onRemoved: (r) => removals.push(r),
      })) {
        out.push(Buffer.from(chunk));
      }
      expect(Buffer.concat(out).equals(Buffer.from(expected.out))).toBe(true);
      expect(expected.out).toContain('{"text":"a line the byte-order mark starts"}\n');
      expect(expected.out).not.toContain('\ufeff');
      expect(removals).toEqual(expected.removals);
      const summary = prep.summary();
      expect(summary).toEqual(expected.summary);
      expect(summary.removed.exact).toBeGreaterThan(50);
      // Exact duplicates never reach the threads: the exact verdicts were taken on the reading thread.
      expect(prep.sentToThreads).toBe(summary.docs_in - summary.removed.exact);
    } finally {
      await prep.close();
    }
  }, 120_000);

  it('refuses a bad line with the same error, at the same line, as the string reader', async () => {
    const prep = await ThreadedDataPrep.create(battery, 1);
    try {
      const bad = Buffer.from(`${corpus[0]}\n${corpus[0]}\n{"text": 1}\n`);
      const read = async () => {
        for await (const _ of keptChunks({ prep, chunks: chunksOf(bad, 7), format: 'jsonl', shardNo: 0, documents: new ReadBudget(1e9, 'documents'), signal: undefined, onRemoved: () => undefined }));
      };
      await expect(read()).rejects.toThrow('line 3 has no string "text" field');
    } finally {
      await prep.close();
    }
  }, 60_000);
});
