import type { DataPrepParams } from './params.js';

/**
 * What collapsing replaces by one space: a run of two or more white-space characters, or one that is not the space.
 * The same result as replacing every `\s+` run (a lone space is replaced by itself), but only the runs that change
 * are matched and copied: on the fixture corpus's re-spaced texts ≈ 4.5 µs a text against ≈ 11–22 for `/\s+/gu`.
 * Without the `u` flag `\s` is the same set (all in the BMP; no surrogate is white space).
 */
const WHITESPACE_RUN = /\s{2,}|[^\S ]/g;
const WORD = /[\p{L}\p{N}]+/gu;
/**
 * Text with no code unit from U+0300 up is already NFC: every character below U+0300 has NFC_Quick_Check=Yes and
 * none combines with what precedes it (the first combining mark is U+0300), so normalize(), which copies the text
 * through ICU, is skipped for it. This covers ASCII and the Latin-1 and Latin Extended letters.
 */
const MAYBE_NOT_NFC = /[^\u0000-\u02ff]/;
/**
 * What collapsing changes: a white-space character other than the space (the class is exactly what `\s` and
 * `trim` match), or two spaces in a row. A text with none of them, and no space at either end, is already
 * collapsed; this test costs a scan without building a string, where the replace always builds one.
 */
const NOT_COLLAPSED = /[\t\n\v\f\r\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]| {2}/;
const SPACE = 0x20;

/** The text the exact-dedup hash is taken over: NFC, white space collapsed, case folded when configured. */
export function normalizeText(text: string, opts: DataPrepParams['normalization']): string {
  const nfc = MAYBE_NOT_NFC.test(text) ? text.normalize('NFC') : text;
  const collapsed = isCollapsed(nfc) ? nfc : nfc.replace(WHITESPACE_RUN, ' ').trim();
  return opts.case_fold ? collapsed.toLowerCase() : collapsed;
}

/**
 * The word tokens shingles and n-grams are made of: runs of letters and digits of the case-folded text, so
 * neither punctuation nor case nor spacing can hide an overlap.
 */
export function wordTokens(normalized: string): string[] {
  return normalized.toLowerCase().match(WORD) ?? [];
}

function isCollapsed(text: string): boolean {
  return text.charCodeAt(0) !== SPACE && text.charCodeAt(text.length - 1) !== SPACE && !NOT_COLLAPSED.test(text);
}
