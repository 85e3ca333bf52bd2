/**
 * One LSH band's buckets as an open-addressing multimap from a 32-bit band key to kept-document ids, in one
 * typed array of interleaved (key, id + 1) slots with linear probing; 0 marks an empty slot. A document adds one
 * slot whatever its key, so documents sharing a key sit in the same probe run and a lookup returns them all. Memory:
 * 8 bytes a slot at a load of 3/8 to 3/4, so 11–21 bytes per kept document and band, against about 30 for a `Map`
 * entry and its growth slack, and no object per document. Keys are compared whole (no bit is dropped).
 */
export class BandTable {
  private slots: Uint32Array;
  private mask: number;
  private size = 0;

  constructor(initialCapacity = 1024) {
    let cap = 16;
    while (cap < initialCapacity) cap *= 2;
    this.slots = new Uint32Array(cap * 2);
    this.mask = cap - 1;
  }

  get count(): number {
    return this.size;
  }

  /** Calls `found` with the id of every document added under `key`. */
  forEach(key: number, found: (id: number) => void): void {
    const { slots, mask } = this;
    const k = key >>> 0;
    for (let i = slot(k, mask); slots[2 * i + 1] !== 0; i = (i + 1) & mask) if (slots[2 * i] === k) found(slots[2 * i + 1]! - 1);
  }

  add(key: number, id: number): void {
    if ((this.size + 1) * 4 > (this.mask + 1) * 3) this.grow();
    insert(this.slots, this.mask, key >>> 0, id + 1);
    this.size++;
  }

  private grow(): void {
    const old = this.slots;
    const cap = (this.mask + 1) * 2;
    this.slots = new Uint32Array(cap * 2);
    this.mask = cap - 1;
    for (let i = 0; i < old.length; i += 2) if (old[i + 1] !== 0) insert(this.slots, this.mask, old[i]!, old[i + 1]!);
  }
}

/** Band keys are already mixed hashes, so their low bits are spread: the key's own bits pick the slot. */
function slot(key: number, mask: number): number {
  return (key ^ (key >>> 16)) & mask;
}

function insert(slots: Uint32Array, mask: number, key: number, value: number): void {
  let i = slot(key, mask);
  while (slots[2 * i + 1] !== 0) i = (i + 1) & mask;
  slots[2 * i] = key;
  slots[2 * i + 1] = value;
}
