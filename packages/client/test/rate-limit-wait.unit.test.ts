import { describe, expect, it } from 'vitest';
import type { Envelope } from '@ito/contracts';
import { waitOutRateLimit } from '@ito/client';

type E = Envelope<{ n: number }>;
const limited = (retryAfterS?: unknown): E =>
  ({ ok: false, live_api_contacted: true, notice: null, error: { code: 'rate_limited', message: 'no', retryable: true, ...(retryAfterS === undefined ? {} : { details: { retry_after_s: retryAfterS } }) } }) as E;
const refusal = (code: string): E => ({ ok: false, live_api_contacted: true, notice: null, error: { code, message: 'no', retryable: true } }) as E;
const okEnv = (n: number): E => ({ ok: true, live_api_contacted: true, notice: null, data: { n } }) as E;

/** Counts reads and waits; answers come from the script in order, the last one repeating. */
function scripted(answers: E[]) {
  const seen = { reads: 0, waits: [] as number[] };
  const read = async () => answers[Math.min(seen.reads++, answers.length - 1)]!;
  const sleep = async (ms: number) => void seen.waits.push(ms);
  return { seen, read, sleep };
}

describe('waitOutRateLimit', () => {
  it('waits the seconds the server names after each rate_limited answer and returns the first other answer', async () => {
    const s = scripted([limited(3), limited(1), okEnv(7)]);
    expect(await waitOutRateLimit(s.read, { sleep: s.sleep })).toEqual(okEnv(7));
    expect(s.seen).toEqual({ reads: 3, waits: [3000, 1000] });
  });

  it('returns any other refusal at once, retryable or not', async () => {
    const s = scripted([refusal('internal_error'), okEnv(1)]);
    expect(await waitOutRateLimit(s.read, { sleep: s.sleep })).toMatchObject({ error: { code: 'internal_error' } });
    expect(s.seen).toEqual({ reads: 1, waits: [] });
  });

  it.each([[undefined], ['3'], [0], [-1], [Number.NaN], [121]])('returns a rate_limited answer whose wait is %s as it is (no wait named, or out of bounds)', async (retryAfterS) => {
    const s = scripted([limited(retryAfterS), okEnv(1)]);
    expect(await waitOutRateLimit(s.read, { sleep: s.sleep })).toMatchObject({ error: { code: 'rate_limited' } });
    expect(s.seen).toEqual({ reads: 1, waits: [] });
  });

  it('stops waiting once the waits would pass the total bound', async () => {
    const s = scripted([limited(40)]);
    expect(await waitOutRateLimit(s.read, { sleep: s.sleep, maxTotalWaitS: 100 })).toMatchObject({ error: { code: 'rate_limited' } });
    expect(s.seen).toEqual({ reads: 3, waits: [40_000, 40_000] });
  });
});
