import { hash } from 'node:crypto';
import { decodeLine, documentText, type ShardFormat } from './documents.js';
import { exactDigest } from './exact-dedup.js';
import { scanJsonTextBytes, textEnd, textStart } from './json-text-bytes.js';
import { normalizeText } from './normalize.js';
import type { DataPrepParams } from './params.js';
import { plainBytes } from './plain-bytes.js';

/**
 * The exact-dedup digest of one line's document, read from the line's UTF-8 bytes (as `byteLineBatchesOf` gives
 * them), or null for a blank line: always `exactDigest(normalizeText(documentText(line)))` of the decoded line,
 * and the same errors. When the line is plainly valid and its text needs no decoding nor normalising
 * (./json-text-bytes.ts, ./plain-bytes.ts), the text's bytes are the UTF-8 of the normalised text and are hashed
 * where they lie; any other line is decoded and read as a string, as before.
 */
export function lineDigest(line: Uint8Array, format: ShardFormat, lineNo: number, normalization: DataPrepParams['normalization']): string | null {
  const caseFold = normalization.case_fold;
  if (format === 'jsonl') {
    if (scanJsonTextBytes(line, caseFold)) return hash('sha256', line.subarray(textStart, textEnd), 'base64url');
  } else if (line.length > 0 && plainBytes(line, 0, line.length, caseFold)) {
    // A plain non-empty line has no white space at its ends, so it is not blank: it is the document.
    return hash('sha256', line, 'base64url');
  }
  return stringLineDigest(decodeLine(line), format, lineNo, normalization);
}

/** The string path: what the exact pass computes from a decoded line. */
export function stringLineDigest(line: string, format: ShardFormat, lineNo: number, normalization: DataPrepParams['normalization']): string | null {
  const text = documentText(line, format, lineNo);
  return text === null ? null : exactDigest(normalizeText(text, normalization));
}
