/** Distinct token hashes given an id; past it, a token is stored by its hash (memory stays bounded). */
export const MAX_VOCABULARY = 1 << 22;

/**
 * Token hashes numbered in the order first seen, so frequent words (met early, in a Zipfian corpus) get small
 * ids: an open-addressing table of (hash, id + 1) slots in one Uint32Array and the hashes by id. Up to
 * {@link MAX_VOCABULARY} ids: at most 80 MiB whatever the input.
 */
export class Vocabulary {
  private slots = new Uint32Array(2 * 4096);
  private mask = 4095;
  private hashes = new Uint32Array(4096);
  private size = 0;

  constructor(private readonly limit = MAX_VOCABULARY) {}

  get count(): number {
    return this.size;
  }

  /** The id of a token hash, given one if it has none yet; -1 when it has none and the vocabulary is full. */
  idOf(hash: number): number {
    const h = hash >>> 0;
    const { slots, mask } = this;
    let i = spread(h) & mask;
    for (; slots[2 * i + 1] !== 0; i = (i + 1) & mask) if (slots[2 * i] === h) return slots[2 * i + 1]! - 1;
    if (this.size >= this.limit) return -1;
    const id = this.size++;
    slots[2 * i] = h;
    slots[2 * i + 1] = id + 1;
    if (id >= this.hashes.length) {
      const grown = new Uint32Array(this.hashes.length * 2);
      grown.set(this.hashes);
      this.hashes = grown;
    }
    this.hashes[id] = h;
    if (this.size * 4 > (mask + 1) * 3) this.grow();
    return id;
  }

  hashOf(id: number): number {
    return this.hashes[id]!;
  }

  private grow(): void {
    const old = this.slots;
    const cap = (this.mask + 1) * 2;
    this.slots = new Uint32Array(cap * 2);
    this.mask = cap - 1;
    for (let k = 0; k < old.length; k += 2) {
      if (old[k + 1] === 0) continue;
      let i = spread(old[k]!) & this.mask;
      while (this.slots[2 * i + 1] !== 0) i = (i + 1) & this.mask;
      this.slots[2 * i] = old[k]!;
      this.slots[2 * i + 1] = old[k + 1]!;
    }
  }
}

/** Token hashes are xxHash32 values, already well spread; folding the top half in costs nothing. */
function spread(h: number): number {
  return h ^ (h >>> 16);
}
