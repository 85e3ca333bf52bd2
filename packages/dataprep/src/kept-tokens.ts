import { shingleSet } from './shingles.js';
import { Vocabulary } from './vocabulary.js';

/** Bytes per chunk: 4 MiB, so growing the store never copies what it holds. */
const CHUNK = 1 << 22;
/** Scratch buffers past this size (bytes or tokens) are dropped after use: a long document leaves nothing behind. */
const SCRATCH_KEPT = 1 << 20;

/**
 * The kept documents' token hashes, from which their shingle sets are made again when a later document names one
 * as a candidate (rarely: about one check per six documents on the benchmark corpus). Each token is stored as a
 * varint of its vocabulary id + 1 (1 byte for the 127 first-seen tokens, 2 for the next 16,256, then 3 or 4), or
 * a 0 byte and its 4-byte hash once the vocabulary is full, in large byte chunks with a 16-byte index entry per
 * document: about 2 bytes a token against 4 a shingle for the shingle sets themselves, and no object per
 * document. The shingle set made again is the one made from the document's own token hashes: Jaccard stays exact.
 */
export class KeptTokens {
  private readonly vocabulary: Vocabulary;
  private readonly chunks: Uint8Array[] = [];
  private filling = -1;
  private used = CHUNK;
  /** Per id: chunk, byte offset, token count, ordinal. */
  private index = new Uint32Array(4 * 1024);
  private size = 0;
  private scratch = new Uint8Array(1024);
  private decoded = new Uint32Array(256);

  constructor(vocabulary = new Vocabulary()) {
    this.vocabulary = vocabulary;
  }

  get count(): number {
    return this.size;
  }

  /** Stores a document's token hashes and returns its id (ids from 0, in the order added). */
  add(tokens: Uint32Array, ordinal: number): number {
    if (this.scratch.length < 5 * tokens.length) this.scratch = new Uint8Array(5 * tokens.length);
    const bytes = this.scratch;
    let n = 0;
    for (let t = 0; t < tokens.length; t++) {
      const id = this.vocabulary.idOf(tokens[t]!);
      if (id < 0) {
        const h = tokens[t]!;
        bytes[n] = 0;
        bytes[n + 1] = h;
        bytes[n + 2] = h >>> 8;
        bytes[n + 3] = h >>> 16;
        bytes[n + 4] = h >>> 24;
        n += 5;
        continue;
      }
      let v = id + 1;
      while (v >= 0x80) {
        bytes[n++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      bytes[n++] = v;
    }
    let chunk: number;
    let at: number;
    if (n > CHUNK) {
      // A document larger than a chunk gets a chunk of its own size; the chunk being filled stays the one filled.
      this.chunks.push(bytes.slice(0, n));
      chunk = this.chunks.length - 1;
      at = 0;
    } else {
      if (n > CHUNK - this.used) {
        this.chunks.push(new Uint8Array(CHUNK));
        this.filling = this.chunks.length - 1;
        this.used = 0;
      }
      chunk = this.filling;
      at = this.used;
      this.chunks[chunk]!.set(bytes.subarray(0, n), at);
      this.used += n;
    }
    // A very long document's scratch is not kept for the rest of the run.
    if (bytes.length > SCRATCH_KEPT) this.scratch = new Uint8Array(1024);
    return this.record(chunk, at, tokens.length, ordinal);
  }

  /** The token hashes stored under `id`, in a buffer reused by the next call (or a fresh one for a long document). */
  tokens(id: number): Uint32Array {
    const i = 4 * id;
    const chunk = this.chunks[this.index[i]!]!;
    let p = this.index[i + 1]!;
    const count = this.index[i + 2]!;
    const out = count > SCRATCH_KEPT ? new Uint32Array(count) : this.decoded.length >= count ? this.decoded : (this.decoded = new Uint32Array(count));
    for (let t = 0; t < count; t++) {
      if (chunk[p] === 0) {
        out[t] = (chunk[p + 1]! | (chunk[p + 2]! << 8) | (chunk[p + 3]! << 16) | (chunk[p + 4]! << 24)) >>> 0;
        p += 5;
        continue;
      }
      let v = 0;
      let shift = 0;
      let b: number;
      do {
        b = chunk[p++]!;
        v |= (b & 0x7f) << shift;
        shift += 7;
      } while (b & 0x80);
      out[t] = this.vocabulary.hashOf(v - 1);
    }
    return out.subarray(0, count);
  }

  /** The shingle set of the document stored under `id`. */
  shingles(id: number, size: number): Uint32Array {
    return shingleSet(this.tokens(id), size);
  }

  ordinalOf(id: number): number {
    return this.index[4 * id + 3]!;
  }

  private record(chunk: number, at: number, count: number, ordinal: number): number {
    if (4 * (this.size + 1) > this.index.length) {
      const grown = new Uint32Array(this.index.length * 2);
      grown.set(this.index);
      this.index = grown;
    }
    const i = 4 * this.size;
    this.index[i] = chunk;
    this.index[i + 1] = at;
    this.index[i + 2] = count;
    this.index[i + 3] = ordinal;
    return this.size++;
  }
}
