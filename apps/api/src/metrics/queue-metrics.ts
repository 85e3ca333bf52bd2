import type { JobCatalog, QueueKit } from '@ito/queue';
import { histogramSamples, type ScrapedMetrics, type Sample } from './scraped-metric.js';

export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/** Bounds for a job's processing time: stage starts take well under a second, data prep and cleanup minutes. */
export const JOB_DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600] as const;

/** Completed jobs per queue a scrape reads to build the duration histogram (the newest first). */
export const RECENT_JOBS = 200;

/** What the API reads from the queue backend at scrape time; apps/server hands it the worker role's kit. */
export interface QueueSource {
  kit: QueueKit;
  /** The job catalogs the workers run: their queues and job names are the only label values reported. */
  catalogs: readonly JobCatalog[];
}

function queuesOf(catalogs: readonly JobCatalog[]): Map<string, Set<string>> {
  const byQueue = new Map<string, Set<string>>();
  for (const catalog of catalogs) {
    for (const [name, def] of Object.entries(catalog)) {
      const queue = def.queue ?? name;
      byQueue.set(queue, (byQueue.get(queue) ?? new Set()).add(name));
    }
  }
  return byQueue;
}

/**
 * Queue depths and job durations, read from BullMQ (either backend) at scrape time. The duration histogram is
 * over the most recent completed jobs each queue still keeps (finishedOn − processedOn of the last attempt), so
 * it is a window, not a running total: the worker role serves no HTTP of its own to count every job, and the
 * queue is the one place every worker's jobs meet.
 */
export function registerQueueMetrics(scraped: ScrapedMetrics, source: QueueSource): void {
  const queues = queuesOf(source.catalogs);
  scraped.register({
    name: 'ito_queue_jobs',
    help: 'Jobs in each queue by state (waiting, active, delayed, failed), read from the queue backend at scrape time.',
    type: 'gauge',
    read: async () => {
      const samples: Sample[] = [];
      for (const queue of queues.keys()) {
        const counts = await source.kit.queue(queue).getJobCounts(...QUEUE_STATES);
        for (const state of QUEUE_STATES) samples.push({ labels: { queue, state }, value: counts[state] ?? 0 });
      }
      return samples;
    },
  });
  scraped.register({
    name: 'ito_job_duration_seconds',
    help: `Processing time (finishedOn − processedOn) of the last ${RECENT_JOBS} completed jobs each queue keeps, by queue and job name, read at scrape time: a recent window, not a running total.`,
    type: 'histogram',
    read: async () => {
      const samples: Sample[] = [];
      for (const [queue, names] of queues) {
        const jobs = await source.kit.queue(queue).getJobs(['completed'], 0, RECENT_JOBS - 1, false);
        const byName = new Map<string, number[]>();
        for (const j of jobs) {
          if (!j || !names.has(j.name) || !j.finishedOn || !j.processedOn) continue;
          const seconds = byName.get(j.name) ?? [];
          seconds.push(Math.max(0, (j.finishedOn - j.processedOn) / 1000));
          byName.set(j.name, seconds);
        }
        for (const [job, seconds] of [...byName].sort(([a], [b]) => a.localeCompare(b))) {
          const counts = JOB_DURATION_BUCKETS.map((b) => seconds.filter((s) => s <= b).length);
          samples.push(...histogramSamples('ito_job_duration_seconds', { queue, job }, JOB_DURATION_BUCKETS, counts, seconds.length, seconds.reduce((a, b) => a + b, 0)));
        }
      }
      return samples;
    },
  });
}
