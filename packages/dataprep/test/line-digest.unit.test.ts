import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { byteLineBatchesOf, createTokenHasher, lineBatchesOf, lineDigest, stringLineDigest, type ShardFormat } from '@ito/dataprep';
import { generateBattery, generateCorpus } from '../../../test/fixtures/dataprep/generator.js';
import { digestOf } from '../src/exact-dedup.js';
import { lastFingerprint } from '../src/fingerprint.js';
import { scanJsonTextBytes, textBytes, textEnd, textStart } from '../src/json-text-bytes.js';
import { jsonLineFingerprinted } from '../src/text-scan.js';
import { jsonLineGenerator } from './json-line-generator.js';

const FOLD = { unicode: 'NFC', whitespace: 'collapse', case_fold: true } as const;
const KEEP_CASE = { ...FOLD, case_fold: false } as const;
const decoder = new TextDecoder('utf-8', { fatal: true });

/** A result or an error message: what the exact pass makes of one line. */
function outcome(f: () => string | null): { digest: string | null } | { error: string } {
  try {
    return { digest: f() };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** How many lines the text scan's module read whole (`jsonLineFingerprinted`), counted by {@link expectSameAsStringPath}. */
let readWhole = 0;

/**
 * The byte path against the string path on one line's bytes: the same digest or the same error, both ways of
 * case folding and both shard formats. The bytes are placed at every offset of a word, so the four-byte scan meets
 * each of its alignments. Returns how many of the JSON readings the byte path answered itself (not by decoding).
 * A line the module reads whole is one the JavaScript byte scan answers too, with the same digest: the module's
 * reading is narrower, never different.
 */
function expectSameAsStringPath(bytes: Uint8Array, lineNo: number, label: string): number {
  let fast = 0;
  for (const caseFold of [false, true]) {
    if (!jsonLineFingerprinted(bytes, caseFold)) continue;
    readWhole++;
    const digest = lastFingerprint();
    expect(scanJsonTextBytes(bytes, caseFold), `${label} (read whole, case_fold ${caseFold})`).toBe(true);
    expect(digestOf(textBytes, textStart, textEnd), `${label} (read whole, case_fold ${caseFold})`).toBe(digest);
  }
  for (const format of ['jsonl', 'text'] as ShardFormat[]) {
    for (const normalization of [KEEP_CASE, FOLD]) {
      const expected = outcome(() => stringLineDigest(decoder.decode(bytes), format, lineNo, normalization));
      for (let shift = 0; shift < 4; shift++) {
        const placed = new Uint8Array(bytes.length + shift + 3).subarray(shift, shift + bytes.length);
        placed.set(bytes);
        expect(outcome(() => lineDigest(placed, format, lineNo, normalization)), `${label} (${format}, case_fold ${normalization.case_fold}, offset ${shift})`).toEqual(expected);
      }
      if (format === 'jsonl' && scanJsonTextBytes(bytes, normalization.case_fold)) fast++;
    }
  }
  return fast;
}

/** Lines the byte path must not misread: each is a trap for one of its shortcuts. */
const ADVERSARIAL = [
  '{"text":"plain words, one space each"}',
  '{"text":""}',
  '{"text":" leading space"}',
  '{"text":"trailing space "}',
  '{"text":"two  spaces"}',
  '{"text":"tab\\there"}',
  '{"text":"raw\ttab"}',
  '{"text":"new\\nline"}',
  '{"text":"escaped \\"quote\\" and \\\\ backslash"}',
  '{"text":"nul \\u0000 inside"}',
  '{"text":"raw \u0001 control"}',
  '{"text":"DEL \u007f is no control to JSON"}',
  '{"text":"\\u0041 escaped letter"}',
  '{"text":"caf\u00e9 and na\u00efve stay below U+0300"}',
  '{"text":"cafe\u0301 is not NFC"}',
  '{"text":"\u1ea1 precomposed above U+0300"}',
  '{"text":"no\u00a0break space"}',
  '{"text":"line\u2028separator"}',
  '{"text":"ideographic\u3000space"}',
  '{"text":"bom\ufeffinside"}',
  '{"text":"\u00a9 and \u00bf: the U+0080-U+00BF block"}',
  '{"text":"Upper Case Words"}',
  '{"text":"\u00c9cole \u00e0 la \u00c0 Latin-1 capitals"}',
  '{"text":"\u0130stanbul dotted capital I"}',
  '{"text":"emoji \ud83d\ude00 four bytes"}',
  '{"text":"lone surrogate escape \\ud83d"}',
  '{"text":"a","text":"b"}',
  '{"text":"a","meta":{"k":1,"k":2}}',
  '{"meta":{"text":"inner"},"text":"outer"}',
  '{"meta":{"text":"inner only"}}',
  '{"t\\u0065xt":"escaped key"}',
  '{"__proto__":{},"text":"a"}',
  '{"constructor":1,"text":"a"}',
  '{"text":1}',
  '{"text":null}',
  '{"id":"no text"}',
  '[{"text":"in an array"}]',
  '{"text":"a"} trailing',
  '{"text":"unterminated}',
  '{"text":"a",}',
  ' \t{"text":"surrounding white space"} \r',
  '\ufeff{"text":"byte-order mark first"}',
  '{"n":-0.5e-3,"b":[true,false,null,[],{}],"s":"\\u00e9\\n","text":"after other values"}',
  '{"n":01,"text":"bad number"}',
  '{"n":1.,"text":"bad number"}',
  '{"s":"\\x41","text":"bad escape"}',
  '{"id":"raw \u0001 control in another value","text":"a"}',
  '{"id":"raw\ttab in another value","text":"a"}',
  '{"b":falsy,"text":"a"}',
  '{"b":truex,"text":"a"}',
  '{"text";"a"}',
  '{"text":"a";"id":1}',
  '{"text":"a"]',
  `{"deep":${'['.repeat(20)}${']'.repeat(20)},"text":"deep nesting"}`,
  `{${Array.from({ length: 40 }, (_, i) => `"k${i}":${i}`).join(',')},"text":"many keys"}`,
  `{"text":"${'huge line of words '.repeat(60000).trim()}"}`,
  `{"text":"${'x'.repeat(1 << 20)}  end"}`,
  '',
  '   ',
  'plain text line',
  ' text line with space at its start',
];

describe('the exact digest of a line, read from its bytes', () => {
  it('is the string path digest, or its error, on traps for every shortcut', () => {
    let fast = 0;
    readWhole = 0;
    ADVERSARIAL.forEach((line, i) => (fast += expectSameAsStringPath(Buffer.from(line), i + 1, JSON.stringify(line.slice(0, 80)))));
    expect(readWhole).toBeGreaterThan(10);
    // A double space at each position of a word, and a space at a word's end followed by one at the next's start.
    for (let at = 1; at < 12; at++) fast += expectSameAsStringPath(Buffer.from(`{"text":"${'ab'.repeat(6).slice(0, at)}  ${'cd'.repeat(6)}"}`), 1, `double space at ${at}`);
    expect(fast).toBeGreaterThan(10);
  });

  it('is the string path digest on random JSON lines, valid and broken', () => {
    let fast = 0;
    readWhole = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const next = jsonLineGenerator(seed);
      for (let i = 0; i < 50; i++) {
        const line = next();
        fast += expectSameAsStringPath(Buffer.from(line), i + 1, `seed ${seed}, line ${i}: ${JSON.stringify(line)}`);
      }
    }
    expect(fast).toBeGreaterThan(100);
    expect(readWhole).toBeGreaterThan(100);
  });

  it('is the string path digest on the generated corpus and the planted fixture, hashed from the bytes for most lines', async () => {
    const hasher = await createTokenHasher();
    const generated = [...generateCorpus({ docs: 1500, battery: generateBattery(), hasher, seed: 11 })].map((d) => d.line);
    const fixture = readFileSync(new URL('../../../test/fixtures/dataprep/corpus.jsonl', import.meta.url), 'utf8').trimEnd().split('\n');
    for (const [name, lines] of [['generated', generated], ['fixture', fixture]] as const) {
      let fast = 0;
      let whole = 0;
      for (const [i, line] of lines.entries()) {
        const bytes = Buffer.from(line);
        for (const normalization of [KEEP_CASE, FOLD]) {
          expect(lineDigest(bytes, 'jsonl', i + 1, normalization), `${name} line ${i + 1}`).toBe(stringLineDigest(line, 'jsonl', i + 1, normalization));
        }
        if (scanJsonTextBytes(bytes, false)) fast++;
        if (jsonLineFingerprinted(bytes, false)) whole++;
      }
      expect(whole, name).toBe(fast);
      // Planted exact copies are re-spaced or decomposed, so they take the string path; clean documents do not.
      expect(fast / lines.length, name).toBeGreaterThan(0.8);
    }
  });
});

describe('the lines of a byte stream as bytes', () => {
  async function collect<T>(batches: AsyncIterable<T[]>, read: (x: T) => string): Promise<{ lines: string[]; error: string | null }> {
    const lines: string[] = [];
    try {
      for await (const batch of batches) for (const x of batch) lines.push(read(x));
      return { lines, error: null };
    } catch (err) {
      return { lines, error: (err as Error).message };
    }
  }
  async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size);
  }

  it('are the decoded lines, refused with the same error at the same line, whatever the chunks', async () => {
    const streams = [
      Buffer.from('first\r\nsecond é 日本 😀\n\nlast\r'),
      Buffer.concat([Buffer.from('{"text":"a"}\n{"text":"b"}\n'), Buffer.from([0x7b, 0xff, 0x7d, 0x0a]), Buffer.from('{"text":"c"}\n')]),
      Buffer.concat([Buffer.from('ok\n'), Buffer.from([0xe6, 0x97]), Buffer.from('\nafter\n')]),
      Buffer.concat([Buffer.from('ok\n'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('\n')]),
      Buffer.from(`short\n${'x'.repeat(100)}\nafter\n`),
      Buffer.concat([Buffer.from(`${'y'.repeat(100)}\n`), Buffer.from([0xc0, 0xaf, 0x0a])]),
    ];
    for (const [n, bytes] of streams.entries()) {
      for (const size of [1, 3, 7, 16, 64, bytes.length]) {
        for (const max of [60, 1000]) {
          const expected = await collect(lineBatchesOf(chunked(bytes, size), max), (s) => s);
          expect(await collect(byteLineBatchesOf(chunked(bytes, size), max), (b) => decoder.decode(b)), `stream ${n}, chunks of ${size}, max ${max}`).toEqual(expected);
        }
      }
    }
  });
});
