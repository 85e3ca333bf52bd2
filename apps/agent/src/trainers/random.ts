/**
 * A small seedable generator (xoshiro128**) whose whole state is four 32-bit words, so a
 * checkpoint can store it and a restored run draws exactly the numbers the original would have drawn.
 */
export type RandomState = [number, number, number, number];

export class Random {
  private s: Uint32Array;

  constructor(state: RandomState) {
    this.s = Uint32Array.from(state);
    if (this.s.every((w) => w === 0)) this.s[0] = 1;
  }

  /** A generator seeded from text (FNV-1a, then splitmix32 to fill the state). */
  static fromSeed(seed: string): Random {
    let h = 0x811c9dc5;
    for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 0x01000193) >>> 0;
    const state: number[] = [];
    for (let i = 0; i < 4; i++) {
      h = (h + 0x9e3779b9) >>> 0;
      let z = h;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      state.push((z ^ (z >>> 16)) >>> 0);
    }
    return new Random(state as RandomState);
  }

  state(): RandomState {
    return [this.s[0]!, this.s[1]!, this.s[2]!, this.s[3]!];
  }

  nextUint32(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1]!, 5), 7), 9) >>> 0;
    const t = s[1]! << 9;
    s[2]! ^= s[0]!;
    s[3]! ^= s[1]!;
    s[1]! ^= s[2]!;
    s[0]! ^= s[3]!;
    s[2]! ^= t;
    s[3] = rotl(s[3]!, 11);
    return result;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Standard normal (Box–Muller, no cached spare, so the state stays four words). */
  normal(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }

  int(below: number): number {
    return Math.floor(this.next() * below);
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
