import { describe, expect, it } from 'vitest';
import { FairShareSlots } from '../src/fair-share.js';

/** Slots on a clock the test moves; `pick` enters a job the way the worker does and decides it. */
function slotsOf(concurrency: number, share: { maxActivePerKey: number; keepFree?: number; deferMs?: number }) {
  let now = 1_000_000;
  const slots = new FairShareSlots(share, concurrency, () => now);
  return {
    slots,
    advance: (ms: number) => (now += ms),
    /** A job of `key` picked: null if it started (it keeps its slot), else the deferral (its slot is let go). */
    pick(key: string, jobId: string): number | null {
      slots.enter();
      const d = slots.tryTake(key, jobId);
      if (d !== null) slots.leave();
      return d;
    },
    finish(key: string) {
      slots.release(key);
      slots.leave();
    },
  };
}

describe('a worker`s fair share decides each picked job from its own counts', () => {
  it('a key alone borrows idle slots up to the kept-free ones; held back there, a job waits 1/8 deferMs, doubling to 4 deferMs', () => {
    const s = slotsOf(8, { maxActivePerKey: 2, deferMs: 80 });
    for (let n = 0; n < 6; n++) expect(s.pick('A', `a${n}`)).toBeNull();
    const waits = [];
    for (let i = 0; i < 7; i++) {
      waits.push(s.pick('A', 'a6'));
      s.advance(waits.at(-1)!);
    }
    expect(waits).toEqual([10, 20, 40, 80, 160, 320, 320]);
    // Another job starts its own back-off from the short wait.
    expect(s.pick('A', 'a7')).toBe(10);
    // A slot of its own freed: the job that waited starts, and its back-off is forgotten.
    s.finish('A');
    expect(s.pick('A', 'a6')).toBeNull();
    s.finish('A');
    s.finish('A');
    expect(s.pick('A', 'a8')).toBeNull();
    expect(s.pick('A', 'a9')).toBeNull();
    expect(s.pick('A', 'a6')).toBe(10);
  });

  it('with no slot kept free, a key alone takes every slot', () => {
    const s = slotsOf(4, { maxActivePerKey: 1, keepFree: 0 });
    for (let n = 0; n < 4; n++) expect(s.pick('A', `a${n}`)).toBeNull();
  });

  it('a key under its share always starts, even in kept-free slots another key left', () => {
    const s = slotsOf(8, { maxActivePerKey: 2, deferMs: 100 });
    for (let n = 0; n < 6; n++) expect(s.pick('A', `a${n}`)).toBeNull();
    expect(s.pick('B', 'b0')).toBeNull();
    expect(s.pick('B', 'b1')).toBeNull();
    expect(s.pick('B', 'b2')).not.toBeNull();
  });

  it('while a key it sent back waits, a key running more is sent back for the full deferMs, and the one behind borrows', () => {
    const s = slotsOf(8, { maxActivePerKey: 2, deferMs: 100 });
    for (let n = 0; n < 6; n++) expect(s.pick('A', `a${n}`)).toBeNull();
    expect(s.pick('B', 'b0')).toBeNull();
    expect(s.pick('B', 'b1')).toBeNull();
    expect(s.pick('B', 'b2')).toBe(13); // no slot to spare: B waits, and now counts as waiting
    // A gives back 4 slots: A (2 running) and B (2) both wait; each may grow while the other does not run fewer.
    for (let i = 0; i < 4; i++) s.finish('A');
    expect(s.pick('A', 'a6')).toBeNull(); // A 3, B 2 waiting
    expect(s.pick('A', 'a7')).toBe(100); // B runs fewer: A waits the full deferMs
    expect(s.pick('B', 'b2')).toBeNull(); // B 3
    expect(s.pick('A', 'a7')).not.toBeNull(); // 6 running: the kept 2 stay free
    expect(s.pick('B', 'b3')).not.toBeNull();
    // B gives one back: it runs fewer than A again, so A waits; once B has not been sent back for a while, it no
    // longer counts as waiting and A borrows the slot.
    s.finish('B');
    expect(s.pick('A', 'a7')).toBe(100);
    s.advance(5_000);
    expect(s.pick('A', 'a7')).toBeNull();
  });

  it('refuses a share that cannot work', () => {
    expect(() => new FairShareSlots({ maxActivePerKey: 0 }, 4)).toThrow(/maxActivePerKey/);
    expect(() => new FairShareSlots({ maxActivePerKey: 2, keepFree: -1 }, 4)).toThrow(/keepFree/);
  });
});
