/**
 * Load generation for the API benchmark: HTTP calls on a keep-alive agent, a closed loop (a fixed number of
 * clients, each sending its next request when the last one answered) and an open loop (requests sent on a fixed
 * schedule whatever the server does, latency measured from the scheduled send time).
 */
import { Agent, request } from 'node:http';

export interface Answer {
  status: number;
  body: any;
}

export function createCaller(maxSockets: number) {
  const agent = new Agent({ keepAlive: true, maxSockets });
  const call = (url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const req = request(url, { method, agent, headers: body ? { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      });
      req.on('error', reject);
      req.end(body);
    });
  return { call, close: () => agent.destroy() };
}

export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

const sorted = (values: readonly number[]) => [...values].sort((a, b) => a - b);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `total` jobs through `clients` concurrent loops; each job returns the latency it wants recorded. */
export async function closedLoop(total: number, clients: number, job: (i: number) => Promise<number>) {
  let next = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < total; i = next++) latencies.push(await job(i));
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const s = sorted(latencies);
  return { seconds, perSecond: total / seconds, p50: percentile(s, 50), p99: percentile(s, 99) };
}

/**
 * Sends job `i` at `start + i / rate` seconds, for `warmupSeconds + seconds`; a slow answer never delays the next
 * send, so a stalled server shows as latency instead of as fewer requests. A job resolves with the times
 * (`performance.now()`) at which each of its phases finished, or null when it failed. Latency of phase k is that
 * time minus the scheduled send time; jobs scheduled in the warm-up are left out of the figures.
 */
export async function openLoop(opts: { rate: number; seconds: number; warmupSeconds: number }, job: (i: number) => Promise<number[] | null>) {
  const total = Math.round(opts.rate * (opts.warmupSeconds + opts.seconds));
  const warmup = Math.round(opts.rate * opts.warmupSeconds);
  const start = performance.now() + 20;
  const lag: number[] = [];
  const outcomes: Array<{ scheduled: number; marks: number[] | null }> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const scheduled = start + (i * 1000) / opts.rate;
    const wait = scheduled - performance.now();
    if (wait > 0) await sleep(wait);
    lag.push(performance.now() - scheduled);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    pending.push(
      job(i)
        .catch(() => null)
        .then((marks) => {
          inFlight--;
          outcomes[i] = { scheduled, marks };
        }),
    );
  }
  const sentSeconds = (performance.now() - start) / 1000;
  await Promise.all(pending);
  const measured = outcomes.slice(warmup);
  const done = measured.filter((o) => o.marks !== null);
  const phases = done[0]?.marks?.length ?? 0;
  const latency = Array.from({ length: phases }, (_, k) => sorted(done.map((o) => o.marks![k]! - o.scheduled)));
  const lagSorted = sorted(lag.slice(warmup));
  return {
    rate: opts.rate,
    sent: total,
    sentPerSecond: total / sentSeconds,
    measured: measured.length,
    failures: measured.length - done.length,
    maxInFlight,
    sendLagP99: percentile(lagSorted, 99),
    phases: latency.map((l) => ({ p50: percentile(l, 50), p99: percentile(l, 99), max: l.at(-1) ?? 0 })),
  };
}
