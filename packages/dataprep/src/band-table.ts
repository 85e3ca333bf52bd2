/** Grown by a quarter when 4/5 full: the load stays between 0.64 and 0.8, about 11 bytes a document. */
const MAX_LOAD = 0.8;
const GROWTH = 1.25;

/**
 * One LSH band's buckets as an open-addressing multimap from a 32-bit band key to kept-document ids, in one
 * typed array of interleaved (key, id + 1) slots with linear probing; 0 marks an empty slot. A document adds one
 * slot whatever its key, so documents sharing a key sit in the same probe run and a lookup returns them all. The
 * capacity need not be a power of two (a key's top 24 bits are scaled to it), so the table grows by a quarter,
 * not by half: 8 bytes a slot at a load of 0.64 to 0.8 is 10–12.5 bytes per kept document and band, against
 * about 30 for a `Map` entry and its growth slack, and no object per document. Keys are compared whole.
 */
export class BandTable {
  private slots: Uint32Array;
  private capacity: number;
  private size = 0;

  /** Tables of different bands given different capacities grow at different documents, not all at once. */
  constructor(initialCapacity = 1024) {
    this.capacity = Math.max(16, Math.ceil(initialCapacity));
    this.slots = new Uint32Array(this.capacity * 2);
  }

  get count(): number {
    return this.size;
  }

  /** Calls `found` with the id of every document added under `key`. */
  forEach(key: number, found: (id: number) => void): void {
    const { slots, capacity } = this;
    const k = key >>> 0;
    for (let i = home(k, capacity); slots[2 * i + 1] !== 0; i = i + 1 === capacity ? 0 : i + 1) if (slots[2 * i] === k) found(slots[2 * i + 1]! - 1);
  }

  add(key: number, id: number): void {
    if (this.size + 1 > this.capacity * MAX_LOAD) this.grow();
    insert(this.slots, this.capacity, key >>> 0, id + 1);
    this.size++;
  }

  private grow(): void {
    const old = this.slots;
    this.capacity = Math.ceil(this.capacity * GROWTH);
    this.slots = new Uint32Array(this.capacity * 2);
    for (let i = 0; i < old.length; i += 2) if (old[i + 1] !== 0) insert(this.slots, this.capacity, old[i]!, old[i + 1]!);
  }
}

/** The key's top 24 bits scaled to the capacity (exact in a double up to 2²⁹ slots); band keys are mixed hashes. */
function home(key: number, capacity: number): number {
  return Math.floor(((key >>> 8) * capacity) / 16777216);
}

function insert(slots: Uint32Array, capacity: number, key: number, value: number): void {
  let i = home(key, capacity);
  while (slots[2 * i + 1] !== 0) i = i + 1 === capacity ? 0 : i + 1;
  slots[2 * i] = key;
  slots[2 * i + 1] = value;
}
