import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF, backoffDelay } from '@ito/client';

/** Retry pacing: exponential from the base, capped, with full jitter over the upper half of each step. */
describe('backoff', () => {
  const low = () => 0;
  const high = () => 1;

  it('defaults to 200 ms doubling up to 2 s', () => {
    expect(DEFAULT_BACKOFF).toEqual({ baseMs: 200, maxMs: 2000 });
  });

  it('doubles per retry from the base and stops at the cap', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, DEFAULT_BACKOFF, high))).toEqual([200, 400, 800, 1600, 2000, 2000]);
  });

  it('jitters between half the step and the whole step', () => {
    expect([1, 2, 3].map((n) => backoffDelay(n, DEFAULT_BACKOFF, low))).toEqual([100, 200, 400]);
    expect(backoffDelay(3, DEFAULT_BACKOFF, () => 0.5)).toBe(600);
    expect(backoffDelay(9, { baseMs: 10, maxMs: 50 }, low)).toBe(25);
  });

  it('treats a retry number below 1 as the first', () => {
    expect(backoffDelay(0, DEFAULT_BACKOFF, high)).toBe(200);
    expect(backoffDelay(-3, DEFAULT_BACKOFF, high)).toBe(200);
  });

  it('uses Math.random by default, within the bounds', () => {
    for (let i = 0; i < 50; i++) {
      const d = backoffDelay(2);
      expect(d).toBeGreaterThanOrEqual(200);
      expect(d).toBeLessThanOrEqual(400);
    }
  });

  it('sleeps for the time it is given', async () => {
    const { sleep } = await import('../src/backoff.js');
    const t0 = performance.now();
    await sleep(30);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
  });
});
