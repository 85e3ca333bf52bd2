import type { Logger } from '@ito/config';
import type { Ledger } from '@ito/ledger';
import { createJobClient, startJobWorkers, type JobCatalog, type JobHandlers, type QueueKit } from '@ito/queue';
import { ledgerMaintenanceHandlers, ledgerMaintenanceJobs, SEAL_INTERVAL_MS } from './ledger-maintenance.js';

/** What the worker role needs to build its handlers. */
export interface WorkerResources {
  ledger: Ledger;
  logger: Logger;
}

/** One group of jobs the worker role runs: a catalog, a handler for each entry, and any periodic jobs. */
export interface WorkerRegistration<C extends JobCatalog = JobCatalog> {
  name: string;
  catalog: C;
  handlers: (res: WorkerResources) => JobHandlers<C>;
  schedules?: Array<{ job: Extract<keyof C, string>; everyMs: number; data: unknown }>;
}

function register<C extends JobCatalog>(r: WorkerRegistration<C>): WorkerRegistration {
  return r as unknown as WorkerRegistration;
}

/** Every worker group the worker role starts. Stage workers join this list. */
export const WORKER_REGISTRATIONS: WorkerRegistration[] = [
  register({
    name: 'ledger-maintenance',
    catalog: ledgerMaintenanceJobs,
    handlers: ({ ledger }) => ledgerMaintenanceHandlers(ledger),
    schedules: [{ job: 'ledger.maintenance', everyMs: SEAL_INTERVAL_MS, data: {} }],
  }),
];

export async function startRegisteredWorkers(kit: QueueKit, res: WorkerResources, registrations = WORKER_REGISTRATIONS): Promise<void> {
  for (const r of registrations) {
    const log = res.logger.child({ workers: r.name });
    startJobWorkers(kit, r.catalog, r.handlers(res), {
      onFailed: (info) => log.warn({ job: info.name, jobId: info.jobId, reason: info.reason, final: info.final }, 'job failed'),
    });
    const client = createJobClient(kit, r.catalog);
    for (const s of r.schedules ?? []) await client.schedule(s.job, s.everyMs, s.data as never);
    log.info({ jobs: Object.keys(r.catalog) }, 'workers started');
  }
}
