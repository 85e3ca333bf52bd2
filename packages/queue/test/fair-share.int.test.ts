import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshDatabase, redisForTests } from '../../../test/support/db.js';
import { createJobClient, createQueueKit, startJobWorkers, type QueueBackendConfig } from '../src/index.js';
import { fairShareCatalog, sleep, until } from './support/fair-share.js';

const redis = redisForTests();

function fairness(backend: () => Promise<{ cfg: QueueBackendConfig; cleanup: () => Promise<void> }>) {
  it('one tenant`s backlog holds at most its share of the slots: another tenant`s job starts while it still waits', async () => {
    const { cfg, cleanup } = await backend();
    const suffix = randomBytes(4).toString('hex');
    const kit = createQueueKit(cfg, { prefix: `f${suffix}` });
    try {
      const catalog = fairShareCatalog(suffix);
      const started: string[] = [];
      const active = new Map<string, number>();
      let mostActiveA = 0;
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      startJobWorkers(
        kit,
        catalog,
        {
          work: async (d) => {
            started.push(`${d.tenant}${d.n}`);
            active.set(d.tenant, (active.get(d.tenant) ?? 0) + 1);
            if (d.tenant === 'A') mostActiveA = Math.max(mostActiveA, active.get('A')!);
            // Tenant A's jobs hold their slot until the test lets them go; B's finish at once.
            if (d.tenant === 'A') await gate;
            active.set(d.tenant, active.get(d.tenant)! - 1);
            return null;
          },
        },
        { concurrency: 4, fairShare: { maxActivePerKey: 2, deferMs: 50 } },
      );
      const jobs = createJobClient(kit, catalog);
      for (let n = 0; n < 12; n++) await jobs.enqueue('work', { tenant: 'A', n });
      await jobs.enqueue('work', { tenant: 'B', n: 0 });

      // B's job runs while every A job is still held: A never had more than its 2 of the 4 slots.
      await until(() => started.includes('B0'), 'tenant B`s job to start');
      expect(started.filter((s) => s.startsWith('A'))).toHaveLength(2);
      expect(mostActiveA).toBe(2);

      // Deferred jobs are not lost and spent no attempt: once A's are let go, all twelve complete on their first.
      release();
      await until(() => started.length === 13, 'every job to start', 30_000);
      for (let n = 0; n < 12; n++) {
        let snap = await jobs.snapshot('work', `work-A-${n}`);
        const deadline = Date.now() + 20_000;
        while (snap?.state !== 'completed' && Date.now() < deadline) {
          await sleep(50);
          snap = await jobs.snapshot('work', `work-A-${n}`);
        }
        expect(snap).toMatchObject({ state: 'completed', attemptsMade: 1 });
      }
      expect(mostActiveA).toBe(2);
    } finally {
      await kit.close();
      await cleanup();
    }
  }, 90_000);

  it('closing the kit aborts a running job`s signal and does not wait for it to finish on its own', async () => {
    const { cfg, cleanup } = await backend();
    const suffix = randomBytes(4).toString('hex');
    const kit = createQueueKit(cfg, { prefix: `s${suffix}` });
    try {
      const catalog = fairShareCatalog(suffix);
      let running = false;
      let aborted = false;
      startJobWorkers(kit, catalog, {
        // A job that would run for a minute unless told to stop.
        work: async (_d, ctx) => {
          running = true;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 60_000);
            ctx.signal.addEventListener('abort', () => {
              aborted = true;
              clearTimeout(timer);
              resolve();
            });
          });
          return null;
        },
      });
      await createJobClient(kit, catalog).enqueue('work', { tenant: 'A', n: 1 });
      await until(() => running, 'the job to start');
      // Without the abort, close waits the job's full minute and the test times out.
      await kit.close();
      expect(aborted).toBe(true);
    } finally {
      await kit.close();
      await cleanup();
    }
  }, 30_000);
}

describe.skipIf(!redis.url)(`fair share on Redis${redis.url ? '' : ` (skipped: ${redis.skipReason})`}`, () => {
  fairness(async () => ({ cfg: { kind: 'redis', redisUrl: redis.url! }, cleanup: async () => undefined }));
});

describe('fair share on the PostgreSQL backend', () => {
  fairness(async () => {
    const db = await freshDatabase();
    return { cfg: { kind: 'postgres', databaseUrl: db.url }, cleanup: db.drop };
  });
});
