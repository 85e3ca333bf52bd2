import { describe, expect, it } from 'vitest';
import { normalizeText } from '@ito/dataprep';

/** Normalisation as it was written first: every text through the replace, the fast paths' reference. */
function reference(text: string, caseFold: boolean): string {
  const collapsed = text.normalize('NFC').replace(/\s+/gu, ' ').trim();
  return caseFold ? collapsed.toLowerCase() : collapsed;
}

const PIECES = [' ', '  ', '\t', '\n', '\v', '\f', '\r', '\u0085', '\u00a0', '\u1680', '\u180e', '\u2000', '\u200a', '\u200b', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff', 'a', 'B', 'é', 'e\u0301', 'Å', '日本', '😀', '\ud83d', '.'];

describe('normalisation', () => {
  it('skips the replace only for text the replace would leave as it is', () => {
    let seed = 7;
    const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    for (let i = 0; i < 20000; i++) {
      const n = Math.floor(next() * 10);
      let text = '';
      for (let k = 0; k < n; k++) text += PIECES[Math.floor(next() * PIECES.length)];
      for (const caseFold of [false, true]) expect(normalizeText(text, { unicode: 'NFC', whitespace: 'collapse', case_fold: caseFold }), JSON.stringify(text)).toBe(reference(text, caseFold));
    }
  });

  it('leaves alone only text that NFC would not change: every pair of code units below U+0300 is already NFC', () => {
    const opts = { unicode: 'NFC', whitespace: 'collapse', case_fold: false } as const;
    for (let a = 0x21; a < 0x300; a++) {
      for (let b = 0x21; b < 0x300; b++) {
        const text = String.fromCharCode(a, b);
        if (text.normalize('NFC') !== text) expect.fail(`U+${a.toString(16)} U+${b.toString(16)} is not NFC`);
      }
    }
    expect(normalizeText('e\u0301', opts)).toBe('é');
    expect(normalizeText('Å\u0300', opts)).toBe('Å\u0300'.normalize('NFC'));
  });

  it('treats as white space exactly the characters \\s matches, over every UTF-16 unit', () => {
    const opts = { unicode: 'NFC', whitespace: 'collapse', case_fold: false } as const;
    for (let c = 0; c <= 0xffff; c++) {
      const text = `a${String.fromCharCode(c)}b`;
      expect(normalizeText(text, opts) === `a b`, `U+${c.toString(16)}`).toBe(/\s/.test(String.fromCharCode(c)) || c === 0x20);
    }
  });
});
