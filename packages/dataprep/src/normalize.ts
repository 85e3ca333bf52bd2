import type { DataPrepParams } from './params.js';

const WHITESPACE_RUN = /\s+/gu;
const WORD = /[\p{L}\p{N}]+/gu;
// Text with no code point above U+007F is already NFC; skipping normalize() for it is the common fast path.
const NON_ASCII = /[^\u0000-\u007f]/;

/** The text the exact-dedup hash is taken over: NFC, white space collapsed, case folded when configured. */
export function normalizeText(text: string, opts: DataPrepParams['normalization']): string {
  const nfc = NON_ASCII.test(text) ? text.normalize('NFC') : text;
  const collapsed = nfc.replace(WHITESPACE_RUN, ' ').trim();
  return opts.case_fold ? collapsed.toLowerCase() : collapsed;
}

/**
 * The word tokens shingles and n-grams are made of: runs of letters and digits of the case-folded text, so
 * neither punctuation nor case nor spacing can hide an overlap.
 */
export function wordTokens(normalized: string): string[] {
  return normalized.toLowerCase().match(WORD) ?? [];
}
