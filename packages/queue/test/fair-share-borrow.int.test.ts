import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshDatabase, redisForTests } from '../../../test/support/db.js';
import { createJobClient, createQueueKit, startJobWorkers, type FairShare, type QueueBackendConfig, type QueueKit } from '../src/index.js';
import { fairShareCatalog, sleep, until } from './support/fair-share.js';

const redis = redisForTests();

/**
 * A worker whose jobs are held until the test lets them go, one by one or all at once; it records each start
 * (so a job run twice shows) and how many of each tenant's jobs run at once.
 */
function heldWorker(kit: QueueKit, suffix: string, concurrency: number, fairShare: FairShare) {
  const catalog = fairShareCatalog(suffix);
  const starts: Array<{ id: string; at: number }> = [];
  const active = new Map<string, number>();
  const most = new Map<string, number>();
  const held: Array<{ tenant: string; go: () => void }> = [];
  let all = false;
  startJobWorkers(
    kit,
    catalog,
    {
      work: async (d) => {
        starts.push({ id: `${d.tenant}${d.n}`, at: Date.now() });
        active.set(d.tenant, (active.get(d.tenant) ?? 0) + 1);
        most.set(d.tenant, Math.max(most.get(d.tenant) ?? 0, active.get(d.tenant)!));
        if (!all) await new Promise<void>((go) => held.push({ tenant: d.tenant, go }));
        active.set(d.tenant, active.get(d.tenant)! - 1);
        return null;
      },
    },
    { concurrency, fairShare },
  );
  return {
    jobs: createJobClient(kit, catalog),
    starts,
    active: (tenant: string) => active.get(tenant) ?? 0,
    most: (tenant: string) => most.get(tenant) ?? 0,
    resetMost: () => most.clear(),
    release(tenant: string, count: number) {
      for (let i = 0; i < count; i++) {
        const at = held.findIndex((h) => h.tenant === tenant);
        held.splice(at, 1)[0]!.go();
      }
    },
    releaseAll() {
      all = true;
      for (const h of held.splice(0)) h.go();
    },
  };
}

async function expectAllCompletedOnce(w: ReturnType<typeof heldWorker>, ids: Array<[string, number]>): Promise<void> {
  for (const [tenant, n] of ids) {
    let snap = await w.jobs.snapshot('work', `work-${tenant}-${n}`);
    const deadline = Date.now() + 20_000;
    while (snap?.state !== 'completed' && Date.now() < deadline) {
      await sleep(50);
      snap = await w.jobs.snapshot('work', `work-${tenant}-${n}`);
    }
    expect(snap).toMatchObject({ state: 'completed', attemptsMade: 1 });
  }
  const ids2 = w.starts.map((s) => s.id);
  expect(new Set(ids2).size).toBe(ids2.length);
  expect(ids2).toHaveLength(ids.length);
}

function workConserving(backend: () => Promise<{ cfg: QueueBackendConfig; cleanup: () => Promise<void> }>) {
  // A deferral would show as a 2 s gap: every start must come well before one.
  it.each([
    { slots: 8, keepFree: 0 as number | undefined, why: 'with no slots kept free, every slot' },
    { slots: 6, keepFree: undefined, why: 'by default its share of slots stays free, and it takes the rest' },
  ])('a tenant alone uses idle slots beyond its share at once: $why', async ({ slots, keepFree }) => {
    const { cfg, cleanup } = await backend();
    const suffix = randomBytes(4).toString('hex');
    const kit = createQueueKit(cfg, { prefix: `wa${suffix}` });
    const w = heldWorker(kit, suffix, 8, { maxActivePerKey: 2, deferMs: 2_000, ...(keepFree === undefined ? {} : { keepFree }) });
    try {
      const t0 = Date.now();
      for (let n = 0; n < 10; n++) await w.jobs.enqueue('work', { tenant: 'A', n });
      await until(() => w.active('A') === slots, `${slots} of A's jobs running`, 1_500);
      expect(Math.max(...w.starts.map((s) => s.at - t0))).toBeLessThan(1_500);
      await sleep(300);
      expect(w.most('A')).toBe(slots);
      w.releaseAll();
      await expectAllCompletedOnce(
        w,
        Array.from({ length: 10 }, (_, n) => ['A', n] as [string, number]),
      );
    } finally {
      w.releaseAll();
      await kit.close();
      await cleanup();
    }
  }, 60_000);

  it('while one tenant floods, another gets its share at once, and slots the first gives back go to the one behind', async () => {
    const { cfg, cleanup } = await backend();
    const suffix = randomBytes(4).toString('hex');
    const kit = createQueueKit(cfg, { prefix: `wb${suffix}` });
    const w = heldWorker(kit, suffix, 8, { maxActivePerKey: 2, deferMs: 100 });
    try {
      for (let n = 0; n < 20; n++) await w.jobs.enqueue('work', { tenant: 'A', n });
      await until(() => w.active('A') === 6, 'A to borrow the idle slots');

      // B arrives behind A's backlog of 14: it finds its share free and starts at once; A takes nothing more.
      for (let n = 0; n < 6; n++) await w.jobs.enqueue('work', { tenant: 'B', n });
      await until(() => w.active('B') === 2, 'B`s share to start while A holds 6', 5_000);
      await sleep(300);
      expect(w.active('A')).toBe(6);
      expect(w.active('B')).toBe(2);

      // One of A's ends: its slot is one of the 2 kept free, so the jobs of both picked into it are sent back,
      // and this worker now knows B waits (it learns of a waiting key only by picking one of its jobs).
      w.release('A', 1);
      await sleep(600);
      expect(w.active('A')).toBe(5);
      // A gives back 3 more: both wait, so they share alike (3 each, 2 kept free), B is not left at its share.
      w.resetMost();
      w.release('A', 3);
      await until(() => w.active('B') === 3, 'B to take a slot A gave back', 5_000);
      await sleep(500);
      expect(w.active('B')).toBe(3);
      expect(w.most('A')).toBeLessThanOrEqual(3);

      w.releaseAll();
      await expectAllCompletedOnce(w, [...Array.from({ length: 20 }, (_, n) => ['A', n] as [string, number]), ...Array.from({ length: 6 }, (_, n) => ['B', n] as [string, number])]);
    } finally {
      w.releaseAll();
      await kit.close();
      await cleanup();
    }
  }, 90_000);

  it('jobs longer than the lock run once each and none is lost, with jobs sent back and borrowed slots around them', async () => {
    const { cfg, cleanup } = await backend();
    const suffix = randomBytes(4).toString('hex');
    // A 1 s lock, renewed every half second by the worker: each job below outlives it twice over.
    const kit = createQueueKit(cfg, { prefix: `wl${suffix}`, jobLockMs: 1_000 });
    try {
      const catalog = fairShareCatalog(suffix);
      const starts: string[] = [];
      startJobWorkers(
        kit,
        catalog,
        {
          work: async (d) => {
            starts.push(`${d.tenant}${d.n}`);
            await sleep(2_500);
            return null;
          },
        },
        // 3 slots to borrow, 1 kept free: the other 5 jobs are sent back, again and again, while these run.
        { concurrency: 4, fairShare: { maxActivePerKey: 1, keepFree: 1, deferMs: 100 } },
      );
      const jobs = createJobClient(kit, catalog);
      for (let n = 0; n < 8; n++) await jobs.enqueue('work', { tenant: 'A', n });
      for (let n = 0; n < 8; n++) {
        let snap = await jobs.snapshot('work', `work-A-${n}`);
        const deadline = Date.now() + 30_000;
        while (snap?.state !== 'completed' && Date.now() < deadline) {
          await sleep(100);
          snap = await jobs.snapshot('work', `work-A-${n}`);
        }
        expect(snap).toMatchObject({ state: 'completed', attemptsMade: 1 });
      }
      // A lapsed lock shows as the job handed out again: started twice.
      expect([...starts].sort()).toEqual(Array.from({ length: 8 }, (_, n) => `A${n}`).sort());
    } finally {
      await kit.close();
      await cleanup();
    }
  }, 90_000);
}

describe.skipIf(!redis.url)(`a work-conserving fair share on Redis${redis.url ? '' : ` (skipped: ${redis.skipReason})`}`, () => {
  workConserving(async () => ({ cfg: { kind: 'redis', redisUrl: redis.url! }, cleanup: async () => undefined }));
});

describe('a work-conserving fair share on the PostgreSQL backend', () => {
  workConserving(async () => {
    const db = await freshDatabase();
    return { cfg: { kind: 'postgres', databaseUrl: db.url }, cleanup: db.drop };
  });
});
