import { isUtf8 } from 'node:buffer';
import { parseStrictJson } from '@ito/contracts';
import { indexOfByte, lastIndexOfByte } from './byte-search.js';
import { scanJsonText } from './json-text.js';

/** How a shard holds its documents: one JSON object with a string `text` per line, or one document per line. */
export type ShardFormat = 'jsonl' | 'text';

/** The longest line (one document) accepted, in UTF-8 bytes: a bound on what one line can make us hold. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
const LF = 0x0a;
const CR = 0x0d;

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
 * async generator (a few microtasks) per chunk instead of per line. Lines are split on the bytes (`indexOf` of
 * `\n`) and each is decoded on its own, so no chunk-sized string is built, joined to the next and copied flat
 * again to be searched; a line split across chunks is joined from its parts once its end is read. A string chunk
 * is taken as its UTF-8 encoding. The bound is on the line's bytes, its CR included, wherever its chunks end.
 */
export function lineBatchesOf(chunks: AsyncIterable<Uint8Array | string>, maxLineBytes = MAX_LINE_BYTES, signal?: AbortSignal): AsyncGenerator<string[]> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  return splitLines(chunks, maxLineBytes, signal, (bytes, lineNo) => {
    try {
      return decoder.decode(bytes);
    } catch {
      throw new DocumentError(`line ${lineNo} is not valid UTF-8`);
    }
  });
}

/**
 * The lines of {@link lineBatchesOf} as their UTF-8 bytes, not decoded: the same lines, refused with the same
 * errors at the same points (every line of a batch is checked to be UTF-8 before the batch is yielded), for a
 * reader that can use the bytes as they are (./line-digest.ts). A line is a view of the chunk it ended in (a
 * copy when it spanned chunks): a caller that keeps one past its next step must copy it, since a source may reuse
 * its buffers.
 */
export function byteLineBatchesOf(chunks: AsyncIterable<Uint8Array | string>, maxLineBytes = MAX_LINE_BYTES, signal?: AbortSignal): AsyncGenerator<Uint8Array[]> {
  return splitLines(
    chunks,
    maxLineBytes,
    signal,
    (bytes, lineNo, checked) => {
      if (!checked && !isUtf8(bytes)) throw new DocumentError(`line ${lineNo} is not valid UTF-8`);
      return bytes;
    },
    isUtf8,
  );
}

/**
 * The string {@link lineBatchesOf} gives for a line that {@link byteLineBatchesOf} gave (checked UTF-8): a leading
 * byte-order mark is dropped, as that reader's decoder drops it, so a line written back from this string is
 * the same bytes as before.
 */
export function decodeLine(bytes: Uint8Array): string {
  return lineDecoder.decode(bytes);
}
const lineDecoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The splitting both readers share; `take` gets each line's bytes, without its `\n` or `\r\n`. With `checkRun`,
 * the whole lines a chunk ends are first checked at once (one call instead of one a line: a `\n` ends a UTF-8
 * character, so the run is valid exactly when each of its lines is), and `take` is told when that check passed.
 */
async function* splitLines<T>(
  chunks: AsyncIterable<Uint8Array | string>,
  maxLineBytes: number,
  signal: AbortSignal | undefined,
  take: (bytes: Uint8Array, lineNo: number, checked: boolean) => T,
  checkRun?: (bytes: Uint8Array) => boolean,
): AsyncGenerator<T[]> {
  let lineNo = 0;
  /** The start of a line whose end has not been read yet, in parts, and their total length. */
  let parts: Uint8Array[] = [];
  let partBytes = 0;
  const taken = (bytes: Uint8Array, checked = false) => take(bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.subarray(0, bytes.length - 1) : bytes, lineNo, checked);
  for await (const raw of chunks) {
    signal?.throwIfAborted();
    const chunk = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
    // Lines are views of a plain Uint8Array: a Buffer's subarray goes through its species constructor, a
    // measurable part of a short line's cost.
    const view = chunk.constructor === Uint8Array ? chunk : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    let nl = indexOfByte(chunk, LF);
    const batch: T[] = [];
    const tooLong = () => new DocumentError(`line ${lineNo} is longer than ${maxLineBytes} bytes`);
    if (nl !== -1 && partBytes > 0) {
      lineNo++;
      if (partBytes + nl > maxLineBytes) throw tooLong();
      batch.push(taken(joined([...parts, view.subarray(0, nl)])));
      parts = [];
      partBytes = 0;
      start = nl + 1;
      nl = indexOfByte(chunk, LF, start);
    }
    const checked = nl !== -1 && checkRun !== undefined && checkRun(view.subarray(start, lastIndexOfByte(chunk, LF)));
    for (; nl !== -1; nl = indexOfByte(chunk, LF, start)) {
      lineNo++;
      if (nl - start > maxLineBytes) throw tooLong();
      batch.push(taken(view.subarray(start, nl), checked));
      start = nl + 1;
    }
    if (batch.length > 0) yield batch;
    if (start < chunk.length) {
      // Copied (about one line a chunk): a source may reuse the buffer it handed over for its next chunk.
      parts.push(view.slice(start));
      partBytes += chunk.length - start;
      if (partBytes > maxLineBytes) throw new DocumentError(`line ${lineNo + 1} is longer than ${maxLineBytes} bytes`);
    }
  }
  if (partBytes > 0) {
    lineNo++;
    yield [taken(joined(parts))];
  }
}

/** The parts of a line that spanned chunks, as one plain Uint8Array like every other line. */
function joined(parts: Uint8Array[]): Uint8Array {
  const line = Buffer.concat(parts);
  return new Uint8Array(line.buffer, line.byteOffset, line.length);
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
