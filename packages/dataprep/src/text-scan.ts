import { inflateRawSync } from 'node:zlib';
import { TEXT_SCAN_TABLES } from './text-scan-tables.generated.js';
import { TEXT_SCAN_WASM } from './text-scan-wasm.generated.js';

/**
 * The exact pass's byte scan of a document's text (./text-scan.wat): whether its UTF-8 bytes are already the
 * normalised text, and if not, the normalised text's UTF-8 decoded from them, for texts the string path would
 * give the same answer for. Conservative: an answer other than `PLAIN` or a text only means that the caller
 * reads the line as a string.
 *
 * In WebAssembly for its vector instructions: the test is over every byte the exact pass hashes, and sixteen at a
 * time it costs a fraction of the same test four bytes at a time in JavaScript (≈ 0.4 against 1.1 ms a MB of text
 * on the generated corpus, the copy into the module's memory included). The package needs WebAssembly already
 * (its token hasher is xxhash-wasm).
 */

/**
 * The memory's layout: two pages of Unicode tables (classes, compositions), the fingerprint's 80 bytes of state
 * (./fingerprint.ts: its key, a packet's scratch, the digest), 16 bytes that stay zero so the scan can read the
 * byte before the text, and the text.
 */
const TABLES_BYTES = 2 * 65536;
export const FINGERPRINT_STATE_AT = TABLES_BYTES;
const TEXT_AT = FINGERPRINT_STATE_AT + 80 + 16;
/** The 16 bytes after the text, which the module fills with a letter so that a vector read past the text's end finds nothing wrong there. */
const PAD = 16;

/** The part of the WebAssembly API used here: the project's `lib` has no DOM, where TypeScript declares it. */
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { readonly exports: unknown };
};

/** The module's memory, as the fingerprint's module imports it. */
export interface ScanMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

interface TextScanExports {
  readonly memory: ScanMemory;
  plain(len: number, fold: number): number;
  decode(len: number, out: number, fold: number, raw: number): number;
}

let scan: TextScanExports | undefined;
let memory: Uint8Array = new Uint8Array(0);

/** The module's instance with its tables in place, made on first use (compiling and inflating take about a millisecond). */
function loaded(): TextScanExports {
  if (scan === undefined) {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(TEXT_SCAN_WASM, 'base64')), {}).exports as unknown as TextScanExports;
    const tables = inflateRawSync(Buffer.from(TEXT_SCAN_TABLES, 'base64'));
    if (tables.length !== TABLES_BYTES) throw new Error('the text scan tables are not two pages');
    memory = new Uint8Array(instance.memory.buffer);
    memory.set(tables, 0);
    scan = instance;
  }
  return scan;
}

/** The module's memory (made on first use), which ./fingerprint.ts shares. */
export function scanMemory(): ScanMemory {
  return loaded().memory;
}

/**
 * A view of the module's whole memory: the one {@link decodedText}'s answers are views of, and the one
 * {@link placeText} places a text in. A new view after the memory grows.
 */
export function scanBytes(): Uint8Array {
  loaded();
  return memory;
}

/**
 * Places `[start, end)` of `bytes` in the module's memory, as {@link plainText} does, and answers where: a caller
 * reads it there until the next call into this module.
 */
export function placeText(bytes: Uint8Array, start: number, end: number): number {
  place(loaded(), bytes, start, end, 0);
  return TEXT_AT;
}

/** Where {@link placeText} and {@link placeString} place a text. */
export const PLACED_AT = TEXT_AT;

/** Places the UTF-8 of `text` where {@link placeText} places bytes, and answers its length in bytes. */
export function placeString(text: string): number {
  const wasm = loaded();
  // Three bytes at most a UTF-16 unit (a surrogate pair is two units and four bytes).
  const room = TEXT_AT + text.length * 3;
  if (room > memory.length) {
    wasm.memory.grow(Math.ceil((room - memory.length) / 65536));
    memory = new Uint8Array(wasm.memory.buffer);
  }
  return encoder.encodeInto(text, memory.subarray(TEXT_AT, room)).written;
}
const encoder = new TextEncoder();

/**
 * Copies `[start, end)` of `bytes` into the module's memory with `room` bytes after the text and its padding,
 * growing the memory when a text is longer than any before it (it never shrinks: at most twice the longest
 * line, `MAX_LINE_BYTES`).
 */
function place(wasm: TextScanExports, bytes: Uint8Array, start: number, end: number, room: number): void {
  const len = end - start;
  const need = TEXT_AT + len + PAD + room;
  if (need > memory.length) {
    wasm.memory.grow(Math.ceil((need - memory.length) / 65536));
    memory = new Uint8Array(wasm.memory.buffer);
  }
  // The module writes the padding itself: one call fewer a text.
  memory.set(bytes.subarray(start, end), TEXT_AT);
}

/** What {@link plainText} found: the bytes are the normalised text, {@link decodedText} may answer, or it would not. */
export const PLAIN = 1;
export const NOT_PLAIN = 0;
export const STRING_PATH = 2;
export type PlainAnswer = typeof PLAIN | typeof NOT_PLAIN | typeof STRING_PATH;

/**
 * Whether `[start, end)` of `bytes` is, as it is, a text `normalizeText` leaves unchanged that is also a JSON
 * string literal's content with no escape (no control byte, no backslash, no white space but single spaces and
 * none at either end, no combining mark, and only characters the tables class as starters NFC leaves alone; with
 * case folding, only those lower-casing leaves alone too), so that its bytes are the UTF-8 of the normalised text:
 * `PLAIN`. Otherwise `NOT_PLAIN`, or `STRING_PATH` when a character {@link decodedText} would refuse comes before
 * anything that makes the text not plain.
 */
export function plainText(bytes: Uint8Array, start: number, end: number, caseFold: boolean): PlainAnswer {
  if (start === end) return PLAIN;
  const wasm = loaded();
  place(wasm, bytes, start, end, 0);
  const answer = wasm.plain(end - start, caseFold ? 1 : 0) as PlainAnswer;
  return answer === PLAIN && (bytes[start] === SPACE || bytes[end - 1] === SPACE) ? NOT_PLAIN : answer;
}

/**
 * The UTF-8 of `normalizeText` of the text `[start, end)` of `bytes` holds, or null when the string path must
 * read it: a JSON string literal's content whose escapes are valid (they are decoded; a raw control character is
 * refused), or with `raw` a text shard's line taken as it is. Only texts whose characters the tables class as
 * starters NFC keeps (with case folding, that lower-casing keeps too), white space, or marks NFC composes with the
 * character just before them (./text-scan-tables.generated.ts) are answered. The view is into the module's
 * memory and holds until the next call.
 */
export function decodedText(bytes: Uint8Array, start: number, end: number, caseFold: boolean, raw: boolean): Uint8Array | null {
  const wasm = loaded();
  const len = end - start;
  const out = (TEXT_AT + len + PAD + 15) & ~15;
  place(wasm, bytes, start, end, out - (TEXT_AT + len + PAD) + len);
  const written = wasm.decode(len, out, caseFold ? 1 : 0, raw ? 1 : 0);
  return written < 0 ? null : memory.subarray(out, out + written);
}

const SPACE = 0x20;
