import { describe, expect, it } from 'vitest';
import { DocumentError, lineBatchesOf, linesOf } from '@ito/dataprep';

/** Lines are split on the bytes and decoded one by one: a line's parts may come in many chunks. */
async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size);
}
async function all(it: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const l of it) out.push(l);
  return out;
}

describe('lines of a byte stream', () => {
  const text = 'first line\r\nsecond, longer line with é and 日本 and 😀\n\nlast\r';
  const expected = ['first line', 'second, longer line with é and 日本 and 😀', '', 'last'];

  it('are the same whatever the chunk size: CR LF split between chunks, characters split, a last line with no LF', async () => {
    const bytes = Buffer.from(text);
    for (const size of [1, 2, 3, 5, 11, 12, 13, 64, bytes.length]) expect(await all(linesOf(chunked(bytes, size))), `chunks of ${size}`).toEqual(expected);
    // String chunks are taken as their UTF-8.
    expect(await all(linesOf((async function* () { yield text.slice(0, 20); yield text.slice(20); })()))).toEqual(expected);
  });

  it('come one batch per chunk, a line that ends in a later chunk in that chunk\'s batch', async () => {
    const batches: string[][] = [];
    for await (const b of lineBatchesOf(chunked(Buffer.from('aaaa\nbb\ncccccccc\nd'), 6))) batches.push(b);
    // Chunks: "aaaa\nb" "b\ncccc" "cccc\nd".
    expect(batches).toEqual([['aaaa'], ['bb'], ['cccccccc'], ['d']]);
  });

  it('refuse a line longer than the bound across chunks, and invalid UTF-8 naming its line', async () => {
    const long = Buffer.from(`ok\n${'x'.repeat(100)}\nafter\n`);
    await expect(all(linesOf(chunked(long, 7), 60))).rejects.toThrow(new DocumentError('line 2 is longer than 60 bytes'));
    expect(await all(linesOf(chunked(long, 7), 100))).toEqual(['ok', 'x'.repeat(100), 'after']);
    // Whether the line ends in the chunk its start came in, in the next one, or in one after.
    for (const size of [long.length, 90, 50]) await expect(all(linesOf(chunked(long, size), 99)), `chunks of ${size}`).rejects.toThrow(new DocumentError('line 2 is longer than 99 bytes'));
    const bad = Buffer.concat([Buffer.from('fine\nalso fine\nbad '), Buffer.from([0xc3]), Buffer.from('\nnever\n')]);
    for (const size of [3, 1000]) await expect(all(linesOf(chunked(bad, size)))).rejects.toThrow(new DocumentError('line 3 is not valid UTF-8'));
    // A character cut by the end of the stream is invalid too.
    await expect(all(linesOf(chunked(Buffer.from([0x61, 0x0a, 0xe6, 0x97]), 2)))).rejects.toThrow(/line 2 is not valid UTF-8/);
  });
});
