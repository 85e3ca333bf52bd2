/** Values per chunk: 4 MiB chunks, so growing the store never copies what it holds. */
const CHUNK = 1 << 20;

/**
 * The kept documents' shingle sets, appended to large chunks of one typed array each instead of one typed array
 * (and its buffer, backing store and map entry, about 200 bytes) per document: 4 bytes a shingle and 16 bytes a
 * document. Documents are numbered in the order added (ids from 0); each remembers its ordinal.
 */
export class SetStore {
  private readonly chunks: Uint32Array[] = [];
  private filling = -1;
  private used = CHUNK;
  /** Per id: chunk, offset in it, length, ordinal. */
  private index = new Uint32Array(4 * 1024);
  private size = 0;

  get count(): number {
    return this.size;
  }

  /** Stores a copy of `set` and returns its id. */
  add(set: Uint32Array, ordinal: number): number {
    // A set larger than a chunk gets a chunk of its own size; the chunk being filled stays the one filled.
    if (set.length > CHUNK) {
      this.chunks.push(set.slice());
      return this.record(this.chunks.length - 1, 0, set.length, ordinal);
    }
    if (set.length > CHUNK - this.used) {
      this.chunks.push(new Uint32Array(CHUNK));
      this.filling = this.chunks.length - 1;
      this.used = 0;
    }
    this.chunks[this.filling]!.set(set, this.used);
    const id = this.record(this.filling, this.used, set.length, ordinal);
    this.used += set.length;
    return id;
  }

  /** The set stored under `id`, as a view (valid as long as the store). */
  get(id: number): Uint32Array {
    const i = 4 * id;
    const at = this.index[i + 1]!;
    return this.chunks[this.index[i]!]!.subarray(at, at + this.index[i + 2]!);
  }

  ordinalOf(id: number): number {
    return this.index[4 * id + 3]!;
  }

  private record(chunk: number, at: number, length: number, ordinal: number): number {
    if (4 * (this.size + 1) > this.index.length) {
      const grown = new Uint32Array(this.index.length * 2);
      grown.set(this.index);
      this.index = grown;
    }
    const i = 4 * this.size;
    this.index[i] = chunk;
    this.index[i + 1] = at;
    this.index[i + 2] = length;
    this.index[i + 3] = ordinal;
    return this.size++;
  }
}
