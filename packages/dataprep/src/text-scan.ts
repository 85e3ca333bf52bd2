import { randomFillSync } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { FORBIDDEN_JSON_KEYS } from '@ito/contracts';
import { FINGERPRINT_WASM } from './fingerprint-wasm.generated.js';
import { TEXT_SCAN_TABLES } from './text-scan-tables.generated.js';
import { TEXT_SCAN_WASM } from './text-scan-wasm.generated.js';

/**
 * The exact pass's byte scan of a document's text (./text-scan.wat): whether its UTF-8 bytes are already the
 * normalised text, and if not, the normalised text's UTF-8 decoded from them, for texts the string path would
 * give the same answer for; and, for a JSON line of the common shape, the whole line read there and its text's
 * fingerprint (./fingerprint.wat) taken, in one call. Conservative: an answer other than `PLAIN`, a text or a
 * fingerprint only means that the caller reads the line another way.
 *
 * In WebAssembly for its vector instructions: the test is over every byte the exact pass hashes, and sixteen at a
 * time it costs a fraction of the same test four bytes at a time in JavaScript (≈ 0.4 against 1.1 ms a MB of text
 * on the generated corpus, the copy into the module's memory included). The package needs WebAssembly already
 * (its token hasher is xxhash-wasm).
 */

/**
 * The memory's layout, which ./text-scan.wat's globals repeat: two pages of Unicode tables (classes,
 * compositions); the fingerprint's 80 bytes of state (its key, a packet's scratch, the digest); 256 bytes for the
 * keys of the JSON line `line` reads; 64 for the keys the strict reader refuses; 16 bytes that stay zero so the
 * scan can read the byte before the text; and the text.
 */
const TABLES_BYTES = 2 * 65536;
export const FINGERPRINT_STATE_AT = TABLES_BYTES;
const FINGERPRINT_KEY_BYTES = 32;
const FORBIDDEN_AT = FINGERPRINT_STATE_AT + 80 + 256;
const FORBIDDEN_BYTES = 64;
const TEXT_AT = FORBIDDEN_AT + FORBIDDEN_BYTES + 16;
/**
 * The 16 bytes after the text, which the module fills with a letter so that a vector read past the text's end
 * finds nothing wrong there.
 */
const PAD = 16;

/** The part of the WebAssembly API used here: the project's `lib` has no DOM, where TypeScript declares it. */
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { readonly exports: unknown };
  Memory: new (descriptor: { initial: number }) => ScanMemory;
};

/** The modules' shared memory. */
interface ScanMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

interface TextScanExports {
  plain(len: number, fold: number): number;
  decode(len: number, out: number, fold: number, raw: number): number;
  line(len: number, fold: number, out: number): number;
}

export interface FingerprintExports {
  fingerprint(at: number, len: number, state: number): void;
}

let scan: TextScanExports | undefined;
let fingerprintModule: FingerprintExports | undefined;
let wasmMemory: ScanMemory | undefined;
let memory: Uint8Array = new Uint8Array(0);

/**
 * The two modules on one memory, with the tables, the fingerprint's key (drawn here, once a thread, so that no
 * fingerprint is ever taken under another) and the refused keys in place; made on first use (compiling and
 * inflating take about a millisecond).
 */
function loaded(): TextScanExports {
  if (scan === undefined) {
    const shared = new WebAssembly.Memory({ initial: 3 });
    const fingerprint = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(FINGERPRINT_WASM, 'base64')), { scan: { memory: shared } }).exports as FingerprintExports;
    const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(TEXT_SCAN_WASM, 'base64')), {
      scan: { memory: shared },
      fingerprint: { fingerprint: fingerprint.fingerprint },
    }).exports as TextScanExports;
    const tables = inflateRawSync(Buffer.from(TEXT_SCAN_TABLES, 'base64'));
    if (tables.length !== TABLES_BYTES) throw new Error('the text scan tables are not two pages');
    memory = new Uint8Array(shared.buffer);
    memory.set(tables, 0);
    randomFillSync(memory, FINGERPRINT_STATE_AT, FINGERPRINT_KEY_BYTES);
    memory.set(forbiddenKeys(), FORBIDDEN_AT);
    wasmMemory = shared;
    fingerprintModule = fingerprint;
    scan = instance;
  }
  return scan;
}

/** The keys the strict reader refuses, as `line` reads them: their count, then each as its length and bytes. */
function forbiddenKeys(): Uint8Array {
  const keys = FORBIDDEN_JSON_KEYS.map((k) => Buffer.from(k, 'utf8'));
  const bytes = Buffer.concat([Buffer.from([keys.length]), ...keys.flatMap((k) => [Buffer.from([k.length]), k])]);
  if (bytes.length > FORBIDDEN_BYTES || keys.some((k) => k.length > 255)) throw new Error('the refused keys do not fit the text scan');
  return bytes;
}

/** The fingerprint's module, on the text scan's memory (./fingerprint.ts). */
export function fingerprintExports(): FingerprintExports {
  loaded();
  return fingerprintModule!;
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
  loaded();
  place(bytes, start, end, 0);
  return TEXT_AT;
}

/** Where {@link placeText} and {@link placeString} place a text. */
export const PLACED_AT = TEXT_AT;

/** Places the UTF-8 of `text` where {@link placeText} places bytes, and answers its length in bytes. */
export function placeString(text: string): number {
  loaded();
  // Three bytes at most a UTF-16 unit (a surrogate pair is two units and four bytes).
  const room = TEXT_AT + text.length * 3;
  reach(room);
  return encoder.encodeInto(text, memory.subarray(TEXT_AT, room)).written;
}
const encoder = new TextEncoder();

/**
 * Grows the memory to hold `bytes` bytes when a text is longer than any before it (it never shrinks: at most
 * three times the longest text, `MAX_LINE_BYTES`).
 */
function reach(bytes: number): void {
  if (bytes <= memory.length) return;
  wasmMemory!.grow(Math.ceil((bytes - memory.length) / 65536));
  memory = new Uint8Array(wasmMemory!.buffer);
}

/** Copies `[start, end)` of `bytes` into the module's memory with `room` bytes after the text and its padding. */
function place(bytes: Uint8Array, start: number, end: number, room: number): void {
  reach(TEXT_AT + (end - start) + PAD + room);
  // The module writes the padding itself: one call fewer a text. A whole line needs no view of it.
  memory.set(start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end), TEXT_AT);
}

/**
 * {@link place}, with room after it for the module to write a text as long as this one, and where that is: the
 * first 16-byte boundary after the padding.
 */
function placeWithOutput(bytes: Uint8Array, start: number, end: number): number {
  const len = end - start;
  const out = (TEXT_AT + len + PAD + 15) & ~15;
  place(bytes, start, end, out - (TEXT_AT + len + PAD) + len);
  return out;
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
  place(bytes, start, end, 0);
  return wasm.plain(end - start, caseFold ? 1 : 0) as PlainAnswer;
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
  const out = placeWithOutput(bytes, start, end);
  const written = wasm.decode(end - start, out, caseFold ? 1 : 0, raw ? 1 : 0);
  return written < 0 ? null : memory.subarray(out, out + written);
}

/**
 * Whether the JSON line's text was read and its fingerprint taken here, in one call (./text-scan.wat's `line`):
 * true for a flat object of the common shape whose text `plainText` or `decodedText` answers, with the
 * fingerprint of its normalised text then in the fingerprint's state (./fingerprint.ts reads it). False only means
 * that the caller reads the line as before (./json-text-bytes.ts): this never refuses a line.
 */
export function jsonLineFingerprinted(line: Uint8Array, caseFold: boolean): boolean {
  const wasm = loaded();
  // Room to decode the text after the line: never longer than the line.
  const out = placeWithOutput(line, 0, line.length);
  return wasm.line(line.length, caseFold ? 1 : 0, out) === 1;
}

