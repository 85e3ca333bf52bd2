import { z } from 'zod';
import type { Ledger } from '@ito/ledger';
import { defineJobs, type JobHandlers } from '@ito/queue';

/** How often the hash chain is extended over newly committed events. */
export const SEAL_INTERVAL_MS = 2_000;

export const ledgerMaintenanceJobs = defineJobs({
  'ledger.maintenance': {
    schema: z.object({}).strict(),
    timeoutMs: 60_000,
    jobId: () => 'ledger-maintenance',
    attempts: 1,
  },
});

/** Seals until caught up, so a burst of appends is chained in one run rather than one batch per tick. */
export function ledgerMaintenanceHandlers(ledger: Ledger): JobHandlers<typeof ledgerMaintenanceJobs> {
  return {
    'ledger.maintenance': async (_data, ctx) => {
      let sealed = 0;
      for (;;) {
        if (ctx.signal.aborted) break;
        const n = await ledger.sealPending();
        sealed += n;
        if (n === 0) break;
      }
      return { sealed };
    },
  };
}
