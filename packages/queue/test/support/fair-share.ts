import { z } from 'zod';
import { defineJob, defineJobs } from '../../src/index.js';

/**
 * One job type keyed by tenant, on a queue of its own per test (`suffix`), so tests sharing a Redis never see each
 * other's jobs. Job ids are `work-<tenant>-<n>`.
 */
export function fairShareCatalog(suffix: string) {
  return defineJobs({
    work: defineJob({
      queue: `work_${suffix}`,
      schema: z.strictObject({ tenant: z.string(), n: z.number().int() }),
      timeoutMs: 60_000,
      jobId: (d) => `work-${d.tenant}-${d.n}`,
      fairShareKey: (d) => d.tenant,
    }),
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves when `check` holds, polling; rejects with `what` after `ms` (generous: it guards a hang, not a speed). */
export async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}
