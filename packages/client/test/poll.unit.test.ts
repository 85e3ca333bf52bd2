import { describe, expect, it } from 'vitest';
import type { Envelope } from '@ito/contracts';
import { poll, STOP_POLLING_CODES } from '@ito/client';

const refusal = (code: string, retryable: boolean): Envelope<{ n: number }> =>
  ({ ok: false, live_api_contacted: true, notice: null, error: { code, message: 'no', retryable } }) as Envelope<{ n: number }>;
const okEnv = (n: number): Envelope<{ n: number }> => ({ ok: true, live_api_contacted: true, notice: null, data: { n } }) as Envelope<{ n: number }>;

/** Counts reads and waits; answers come from the script in order, the last one repeating. */
function scripted(answers: Envelope<{ n: number }>[]) {
  const seen = { reads: 0, waits: [] as number[] };
  const read = async () => answers[Math.min(seen.reads++, answers.length - 1)]!;
  const sleep = async (ms: number) => void seen.waits.push(ms);
  return { seen, read, sleep };
}

describe('poll', () => {
  it('names exactly the codes that end a watch', () => {
    expect([...STOP_POLLING_CODES].sort()).toEqual(['credential_revoked', 'forbidden', 'not_found', 'unauthenticated']);
  });

  // A stop code ends the watch even if an envelope (a proxy, an older server) marks it retryable.
  it.each(['credential_revoked', 'unauthenticated', 'forbidden', 'not_found'])('stops on %s at once, even when it is marked retryable', async (code) => {
    const s = scripted([okEnv(1), refusal(code, true), okEnv(2)]);
    const answer = await poll(s.read, { intervalMs: 7, done: () => false, maxIterations: 10, sleep: s.sleep });
    expect(answer).toMatchObject({ ok: false, error: { code } });
    expect(s.seen.reads).toBe(2);
    expect(s.seen.waits).toEqual([7]);
  });

  it('stops on any refusal that is not retryable', async () => {
    const s = scripted([refusal('validation_failed', false), okEnv(1)]);
    expect(await poll(s.read, { intervalMs: 7, done: () => false, maxIterations: 10, sleep: s.sleep })).toMatchObject({ error: { code: 'validation_failed' } });
    expect(s.seen.reads).toBe(1);
    expect(s.seen.waits).toEqual([]);
  });

  it('waits one interval after a retryable refusal and reads on, reporting each good answer', async () => {
    const s = scripted([refusal('rate_limited', true), okEnv(1), refusal('internal_error', true), okEnv(2)]);
    const updates: number[] = [];
    const answer = await poll(s.read, { intervalMs: 7, done: (d) => d.n === 2, maxIterations: 10, sleep: s.sleep, onUpdate: (d) => updates.push(d.n) });
    expect(answer).toEqual(okEnv(2));
    expect(updates).toEqual([1, 2]);
    expect(s.seen.reads).toBe(4);
    expect(s.seen.waits).toEqual([7, 7, 7]);
  });

  it('ends at the iteration bound with the last answer, and needs at least one iteration', async () => {
    const s = scripted([okEnv(1), okEnv(2), okEnv(3), okEnv(4)]);
    expect(await poll(s.read, { intervalMs: 7, done: () => false, maxIterations: 3, sleep: s.sleep })).toEqual(okEnv(3));
    expect(s.seen.reads).toBe(3);
    await expect(poll(s.read, { intervalMs: 7, done: () => false, maxIterations: 0, sleep: s.sleep })).rejects.toThrow('poll needs at least one iteration');
  });
});
