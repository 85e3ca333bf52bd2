import { decodeLine, documentText, type ShardFormat } from './documents.js';
import { digestOf, exactDigest } from './exact-dedup.js';
import { scanJsonTextBytes, textBytes, textEnd, textStart } from './json-text-bytes.js';
import { normalizeText } from './normalize.js';
import type { DataPrepParams } from './params.js';
import { lastFingerprint } from './fingerprint.js';
import { NOT_PLAIN, PLACED_AT, PLAIN, decodedText, jsonLineFingerprinted, plainText, scanBytes } from './text-scan.js';

/**
 * The exact-dedup digest of one line's document, read from the line's UTF-8 bytes (as `byteLineBatchesOf` gives
 * them), or null for a blank line: always `exactDigest(normalizeText(documentText(line)))` of the decoded line,
 * and the same errors. When the line is plainly valid and the text scan can read its text (./text-scan.ts's
 * `jsonLineFingerprinted`, then ./json-text-bytes.ts), the normalised text's UTF-8 is hashed in the scan's memory,
 * where the plain test placed it (a text already normalised) or the text scan decoded it; any other line is
 * decoded and read as a string, as before.
 */
export function lineDigest(line: Uint8Array, format: ShardFormat, lineNo: number, normalization: DataPrepParams['normalization']): string | null {
  const caseFold = normalization.case_fold;
  if (format === 'jsonl') {
    // A flat object, the common shape, is read whole in the text scan's module, which takes the digest there too.
    if (jsonLineFingerprinted(line, caseFold)) return lastFingerprint();
    if (scanJsonTextBytes(line, caseFold)) return digestOf(textBytes, textStart, textEnd);
  } else if (line.length > 0) {
    const plain = plainText(line, 0, line.length, caseFold);
    // A plain non-empty line has no white space at its ends, so it is not blank: it is the document, and the plain
    // test placed it in the scan's memory, where its digest is taken.
    if (plain === PLAIN) return digestOf(scanBytes(), PLACED_AT, PLACED_AT + line.length);
    const decoded = plain === NOT_PLAIN ? decodedText(line, 0, line.length, caseFold, true) : null;
    // Nothing left once white space is collapsed: the line is blank, not a document.
    if (decoded !== null) return decoded.length === 0 ? null : digestOf(decoded);
  }
  return stringLineDigest(decodeLine(line), format, lineNo, normalization);
}

/** The string path: what the exact pass computes from a decoded line. */
export function stringLineDigest(line: string, format: ShardFormat, lineNo: number, normalization: DataPrepParams['normalization']): string | null {
  const text = documentText(line, format, lineNo);
  return text === null ? null : exactDigest(normalizeText(text, normalization));
}
