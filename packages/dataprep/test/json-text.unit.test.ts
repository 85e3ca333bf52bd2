import { describe, expect, it } from 'vitest';
import { parseStrictJson } from '@ito/contracts';
import { documentText } from '@ito/dataprep';
import { scanJsonText } from '../src/json-text.js';
import { jsonLineGenerator as generator } from './json-line-generator.js';

/** The text of a line as the strict parser alone reads it: the behaviour the scanner must keep. */
function strictText(line: string): { text: string | null } | { error: string } {
  if (line.trim() === '') return { text: null };
  const parsed = parseStrictJson(line);
  if (!parsed.ok) return { error: `line 1 is not JSON: ${parsed.error.message}` };
  const v = parsed.value;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { error: 'line 1 is not a JSON object' };
  const text = (v as Record<string, unknown>).text;
  return typeof text === 'string' ? { text } : { error: 'line 1 has no string "text" field' };
}

function viaDocumentText(line: string): { text: string | null } | { error: string } {
  try {
    return { text: documentText(line, 'jsonl', 1) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

describe('reading the text of a JSON line without building its object', () => {
  it('agrees with the strict parser on many generated lines, value for value and error for error', () => {
    let fast = 0;
    let valid = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const next = generator(seed);
      for (let i = 0; i < 100; i++) {
        const line = next();
        const expected = strictText(line);
        expect(viaDocumentText(line), `seed ${seed}, line ${i}: ${JSON.stringify(line)}`).toEqual(expected);
        const scanned = scanJsonText(line);
        if ('text' in expected && expected.text !== null) {
          valid++;
          // JSON.parse reads the same text whenever the strict parser accepts the line.
          expect((JSON.parse(line) as { text: string }).text).toBe(expected.text);
          if (scanned !== undefined) fast++;
        }
        // The scanner never answers for a line the strict parser refuses, and never answers differently.
        if (scanned !== undefined) expect(expected).toEqual({ text: scanned });
      }
    }
    expect(valid).toBeGreaterThan(1000);
    // Most valid lines take the fast path; the rest (escaped keys and the like) fall back.
    expect(fast / valid).toBeGreaterThan(0.5);
  });

  it('reads the top-level text only, decodes its escapes, and declines what only the strict parser may judge', () => {
    expect(scanJsonText('{"meta":{"text":"inner"},"text":"outer"}')).toBe('outer');
    expect(scanJsonText('{"text":"a\\nb\\u00e9\\ud83d\\ude00\\/"}')).toBe('a\nbé😀/');
    expect(scanJsonText('{"text":"\\udc00"}')).toBe('\udc00');
    expect(scanJsonText(' {"id":1,"tags":[1,{"a":null},[]],"text":"x"} ')).toBe('x');
    expect(scanJsonText('{"text":"a","text":"b"}')).toBeUndefined();
    expect(scanJsonText('{"meta":{"k":1,"k":2},"text":"a"}')).toBeUndefined();
    expect(scanJsonText('{"t\\u0065xt":"a"}')).toBeUndefined();
    expect(scanJsonText('{"__proto__":{},"text":"a"}')).toBeUndefined();
    expect(scanJsonText('{"text":"a\\u0000"}')).toBeUndefined();
    expect(scanJsonText('{"text":1}')).toBeUndefined();
    expect(scanJsonText('{"id":"no text"}')).toBeUndefined();
    expect(scanJsonText('{"text":"a"} {}')).toBeUndefined();
    expect(scanJsonText(`{"text":"${'x'.repeat(1 << 20)}"}`)).toHaveLength(1 << 20);
    // Duplicates and escaped keys are still refused or read as before, by the strict parser.
    expect(() => documentText('{"text":"a","text":"b"}', 'jsonl', 3)).toThrow(/line 3 is not JSON/);
    expect(documentText('{"t\\u0065xt":"a"}', 'jsonl', 1)).toBe('a');
  });
});
