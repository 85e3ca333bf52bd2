import type { Logger } from '@ito/config';
import type { Ledger } from '@ito/ledger';
import { createJobClient, startJobWorkers, type AnyWorker, type FairShare, type JobCatalog, type JobHandlers, type QueueKit } from '@ito/queue';
import { pipelineHandlers, pipelineJobs, type PipelineResources } from '@ito/worker';
import { ledgerMaintenanceHandlers, ledgerMaintenanceJobs, SEAL_INTERVAL_MS } from './ledger-maintenance.js';

/** What the worker role needs to build its handlers. */
export interface WorkerResources {
  ledger: Ledger;
  logger: Logger;
  pipeline: PipelineResources;
}

/** One group of jobs the worker role runs: a catalog, a handler for each entry, and any periodic jobs. */
export interface WorkerRegistration<C extends JobCatalog = JobCatalog> {
  name: string;
  catalog: C;
  handlers: (res: WorkerResources) => JobHandlers<C>;
  schedules?: Array<{ job: Extract<keyof C, string>; everyMs: number; data: unknown }>;
  /** Jobs of each of its queues processed at once. @defaultValue 1 */
  concurrency?: number;
  /** At most this many of those slots for one tenant's jobs (jobs whose catalog entry names a fair-share key). */
  fairShare?: FairShare;
}

/**
 * A tenant's share of a pipeline worker's 16 slots while another tenant's job waits. A tenant alone may borrow
 * idle slots beyond it, up to 12 (4 always kept free, `keepFree`'s default): its ramp of short stage starts is not
 * held to 4 at a time, yet however many runs it queues (data prep reading large refs), a tenant arriving finds
 * its own 4 free at once, and as the first tenant's jobs end the slots go to whichever tenant runs fewer.
 */
export const PIPELINE_SLOTS_PER_TENANT = 4;

function register<C extends JobCatalog>(r: WorkerRegistration<C>): WorkerRegistration {
  return r as unknown as WorkerRegistration;
}

/** Every worker group the worker role starts. */
export const WORKER_REGISTRATIONS: WorkerRegistration[] = [
  register({
    name: 'ledger-maintenance',
    catalog: ledgerMaintenanceJobs,
    handlers: ({ ledger }) => ledgerMaintenanceHandlers(ledger),
    schedules: [{ job: 'ledger.maintenance', everyMs: SEAL_INTERVAL_MS, data: {} }],
  }),
  register({
    name: 'pipeline',
    catalog: pipelineJobs,
    handlers: ({ pipeline }) => pipelineHandlers(pipeline),
    // Stage starts and finishes wait on the database, not the CPU: many runs hand off at once.
    concurrency: 16,
    fairShare: { maxActivePerKey: PIPELINE_SLOTS_PER_TENANT },
  }),
];

export async function startRegisteredWorkers(kit: QueueKit, res: WorkerResources, registrations = WORKER_REGISTRATIONS): Promise<AnyWorker[]> {
  const started: AnyWorker[] = [];
  for (const r of registrations) {
    const log = res.logger.child({ workers: r.name });
    started.push(
      ...startJobWorkers(kit, r.catalog, r.handlers(res), {
        concurrency: r.concurrency ?? 1,
        ...(r.fairShare ? { fairShare: r.fairShare } : {}),
        onFailed: (info) => {
          // Waiting for nodes is an expected retry, not a warning.
          const waiting = !info.final && info.reason.includes('free live node');
          log[waiting ? 'debug' : 'warn']({ job: info.name, jobId: info.jobId, reason: info.reason, final: info.final }, 'job failed');
        },
      }),
    );
    const client = createJobClient(kit, r.catalog);
    for (const s of r.schedules ?? []) await client.schedule(s.job, s.everyMs, s.data as never);
    log.info({ jobs: Object.keys(r.catalog) }, 'workers started');
  }
  return started;
}
