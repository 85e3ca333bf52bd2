import { parseStrictJson } from '@ito/contracts';
import { scanJsonText } from './json-text.js';

/** How a shard holds its documents: one JSON object with a string `text` per line, or one document per line. */
export type ShardFormat = 'jsonl' | 'text';

/** The longest line (one document) accepted, in UTF-8 bytes: a bound on what one line can make us hold. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

export class DocumentError extends Error {
  override readonly name = 'DocumentError';
}

export function shardFormatOf(name: string): ShardFormat {
  return /\.jsonl?$/i.test(name) ? 'jsonl' : 'text';
}

/**
 * The lines of a byte stream, decoded as UTF-8 (invalid UTF-8 is refused), without their `\n` or `\r\n`. Memory
 * is one chunk plus one line; a line longer than `maxLineBytes` is refused. An aborted `signal` stops it at the
 * next chunk, so a run that ended does not keep a worker reading.
 */
export async function* linesOf(chunks: AsyncIterable<Uint8Array | string>, maxLineBytes = MAX_LINE_BYTES, signal?: AbortSignal): AsyncGenerator<string> {
  for await (const batch of lineBatchesOf(chunks, maxLineBytes, signal)) yield* batch;
}

/**
 * The same lines as {@link linesOf}, one array per chunk read: a reader of many short lines pays one step of an
 * async generator (a few microtasks) per chunk instead of per line, with the same checks at the same points.
 */
export async function* lineBatchesOf(chunks: AsyncIterable<Uint8Array | string>, maxLineBytes = MAX_LINE_BYTES, signal?: AbortSignal): AsyncGenerator<string[]> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let pending = '';
  let lineNo = 0;
  const decode = (chunk: Uint8Array | string, stream: boolean) => {
    try {
      return typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream });
    } catch {
      throw new DocumentError(`line ${lineNo + 1} is not valid UTF-8`);
    }
  };
  for await (const chunk of chunks) {
    signal?.throwIfAborted();
    pending += decode(chunk, true);
    let start = 0;
    let nl: number;
    const batch: string[] = [];
    while ((nl = pending.indexOf('\n', start)) !== -1) {
      lineNo++;
      batch.push(pending.charCodeAt(nl - 1) === 13 ? pending.slice(start, nl - 1) : pending.slice(start, nl));
      start = nl + 1;
    }
    if (batch.length > 0) yield batch;
    pending = start === 0 ? pending : pending.slice(start);
    // A UTF-16 unit is at most 3 UTF-8 bytes: a cheap bound that never needs the line encoded.
    if (pending.length * 3 > maxLineBytes && Buffer.byteLength(pending) > maxLineBytes) throw new DocumentError(`line ${lineNo + 1} is longer than ${maxLineBytes} bytes`);
  }
  pending += decode(new Uint8Array(0), false);
  if (pending.length > 0) yield [pending.endsWith('\r') ? pending.slice(0, -1) : pending];
}

/**
 * The text of one document line, or null for a blank line (not a document). A JSON line must be an object, by
 * the strict parser (no duplicate or prototype keys), whose `text` is a string; its other fields are the
 * document's metadata and are carried through untouched. Errors name the line, never its content. A plainly
 * valid line is read by a scanner that builds no object (./json-text.ts); any other is parsed strictly.
 */
export function documentText(line: string, format: ShardFormat, lineNo: number): string | null {
  if (line.trim() === '') return null;
  if (format === 'text') return line;
  const fast = scanText(line);
  if (fast !== undefined) return fast;
  const parsed = parseStrictJson(line);
  if (!parsed.ok) throw new DocumentError(`line ${lineNo} is not JSON: ${parsed.error.message}`);
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new DocumentError(`line ${lineNo} is not a JSON object`);
  const text = (value as Record<string, unknown>).text;
  if (typeof text !== 'string') throw new DocumentError(`line ${lineNo} has no string "text" field`);
  return text;
}

/** The scanner's answer, or undefined when it declines (or its regex engine gives up on a pathological line). */
function scanText(line: string): string | undefined {
  try {
    return scanJsonText(line);
  } catch {
    return undefined;
  }
}
