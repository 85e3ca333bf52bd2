import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ItoError } from '@ito/contracts';
import { Redis } from 'ioredis';
import { freshDatabase, redisForTests } from '../../../test/support/db.js';
import { startRedisCluster } from '../../../test/support/redis-cluster.js';
import { onPath } from '../../../test/support/services.js';
import {
  createJobClient,
  createQueueKit,
  defineJobs,
  PermanentJobError,
  startJobWorkers,
  type JobClient,
  type JobSnapshot,
  type QueueBackendConfig,
  type QueueKit,
} from '../src/index.js';

/**
 * The same body runs on both backends: the code above this package must not be able to tell them apart.
 */
function queueBehaviour(backend: () => Promise<{ cfg: QueueBackendConfig; cleanup: () => Promise<void> }>) {
  const suffix = randomBytes(4).toString('hex');
  const catalog = defineJobs({
    'test.echo': {
      queue: `echo_${suffix}`,
      schema: z.object({ runId: z.string().min(1), value: z.number().int() }).strict(),
      timeoutMs: 5_000,
      jobId: (d: { runId: string }) => `echo:${d.runId}:double`,
      attempts: 3,
    },
    'test.tick': {
      queue: `tick_${suffix}`,
      schema: z.object({ label: z.string() }).strict(),
      timeoutMs: 5_000,
      jobId: () => `tick-${suffix}`,
    },
  });
  const calls = new Map<string, number>();
  let ticks = 0;
  let kit: QueueKit;
  let jobs: JobClient<typeof catalog>;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const b = await backend();
    cleanup = b.cleanup;
    kit = createQueueKit(b.cfg, { prefix: `t${suffix}` });
    jobs = createJobClient(kit, catalog);
    startJobWorkers(kit, catalog, {
      'test.echo': async (data) => {
        calls.set(data.runId, (calls.get(data.runId) ?? 0) + 1);
        if (data.runId === 'run_gone') throw new PermanentJobError(`run ${data.runId} not found`);
        return { doubled: data.value * 2 };
      },
      'test.tick': async () => {
        ticks += 1;
        return null;
      },
    });
  });

  afterAll(async () => {
    await kit?.close();
    await cleanup?.();
  });

  async function settled(jobId: string): Promise<JobSnapshot> {
    for (let i = 0; i < 150; i++) {
      const s = await jobs.snapshot('test.echo', jobId);
      if (s && (s.state === 'completed' || s.state === 'failed')) return s;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`job ${jobId} did not settle`);
  }

  it('answers ping', async () => {
    await expect(kit.ping()).resolves.toBeUndefined();
  });

  it('processes an enqueued job and keeps its result', async () => {
    const { jobId } = await jobs.enqueue('test.echo', { runId: 'run_a', value: 21 });
    expect(jobId).toBe('echo:run_a:double');
    const s = await settled(jobId);
    expect(s.state).toBe('completed');
    expect(s.returnValue).toEqual({ doubled: 42 });
    expect(calls.get('run_a')).toBe(1);
  });

  it('does not run a job twice when the same id is enqueued again', async () => {
    const first = await jobs.enqueue('test.echo', { runId: 'run_b', value: 1 });
    const second = await jobs.enqueue('test.echo', { runId: 'run_b', value: 1 });
    expect(second.jobId).toBe(first.jobId);
    const done = await settled(first.jobId);
    expect(done).toMatchObject({ state: 'completed', attemptsMade: 1, returnValue: { doubled: 2 } });
    // Re-enqueueing after completion is also a no-op while the job is kept: the job's own record is unchanged
    // right after the call (a new job would be waiting, not completed), so nothing is left to run later.
    const third = await jobs.enqueue('test.echo', { runId: 'run_b', value: 1 });
    expect(third.jobId).toBe(first.jobId);
    expect(await jobs.snapshot('test.echo', first.jobId)).toEqual(done);
    expect(calls.get('run_b')).toBe(1);
  });

  it('refuses invalid job data on enqueue with validation_failed', async () => {
    const attempt = jobs.enqueue('test.echo', { runId: 'run_c', value: 'seven' } as never);
    await expect(attempt).rejects.toBeInstanceOf(ItoError);
    await expect(attempt).rejects.toMatchObject({ code: 'validation_failed', message: expect.stringContaining('value') });
    expect(await jobs.snapshot('test.echo', 'echo:run_c:double')).toBeNull();
  });

  it('fails a job whose handler finds it can never succeed at once, without the retries it was given', async () => {
    const { jobId } = await jobs.enqueue('test.echo', { runId: 'run_gone', value: 1 });
    const s = await settled(jobId);
    expect(s).toMatchObject({ state: 'failed', attemptsMade: 1, failedReason: 'run run_gone not found' });
    expect(calls.get('run_gone')).toBe(1);
  });

  it('fails invalid data on receipt for good, without calling the handler or retrying', async () => {
    // A producer that bypasses the catalog (an older version, a hand-made job).
    await kit.queue(`echo_${suffix}`).add('test.echo', { runId: 'run_d', value: 'x' }, { jobId: 'echo:run_d:double', attempts: 3 });
    const s = await settled('echo:run_d:double');
    expect(s.state).toBe('failed');
    expect(s.failedReason).toMatch(/invalid data for job test.echo: value/);
    expect(s.attemptsMade).toBe(1);
    expect(calls.get('run_d')).toBeUndefined();
  });

  it('runs a scheduled job repeatedly', async () => {
    await jobs.schedule('test.tick', 200, { label: 'maintenance' });
    for (let i = 0; i < 100 && ticks < 2; i++) await new Promise((r) => setTimeout(r, 100));
    expect(ticks).toBeGreaterThanOrEqual(2);
  });
}

const redis = redisForTests();

describe.skipIf(!redis.url)(`queue kit on Redis${redis.url ? '' : ` (skipped: ${redis.skipReason})`}`, () => {
  queueBehaviour(async () => ({ cfg: { kind: 'redis', redisUrl: redis.url! }, cleanup: async () => undefined }));
});

describe.skipIf(!redis.url)('queue keys on Redis', () => {
  it('carry the queue name as a hash tag, so each queue stays in one cluster slot', async () => {
    const suffix = randomBytes(4).toString('hex');
    const kit = createQueueKit({ kind: 'redis', redisUrl: redis.url! }, { prefix: `k${suffix}` });
    const client = new Redis(redis.url!, { lazyConnect: true });
    try {
      await kit.queue(`a_${suffix}`).add('x', {}, { jobId: 'one' });
      await kit.queue(`b_${suffix}`).add('x', {}, { jobId: 'two' });
      const keys = await client.keys(`k${suffix}:*`);
      expect(keys.length).toBeGreaterThan(2);
      for (const key of keys) expect(key).toMatch(new RegExp(`^k${suffix}:\\{(a|b)_${suffix}\\}:`));
    } finally {
      await kit.close();
      if (client.status !== 'end') {
        const keys = await client.keys(`k${suffix}:*`);
        if (keys.length > 0) await client.del(...keys);
      }
      client.disconnect();
    }
  });
});

describe.skipIf(!onPath('redis-server') || !onPath('redis-cli'))('queue kit on a three-master Redis Cluster', () => {
  let stopCluster: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await stopCluster?.();
  });
  queueBehaviour(async () => {
    const cluster = await startRedisCluster();
    stopCluster = cluster.stop;
    return { cfg: { kind: 'redis', redisUrl: cluster.url, cluster: true }, cleanup: async () => undefined };
  });
});

describe('queue kit on the PostgreSQL backend', () => {
  queueBehaviour(async () => {
    const db = await freshDatabase();
    return { cfg: { kind: 'postgres', databaseUrl: db.url }, cleanup: db.drop };
  });
});

describe('ping on an unreachable backend', () => {
  it('rejects for Redis and for PostgreSQL', async () => {
    const deadRedis = createQueueKit({ kind: 'redis', redisUrl: 'redis://127.0.0.1:1' });
    const deadPg = createQueueKit({ kind: 'postgres', databaseUrl: 'postgres://nobody@127.0.0.1:1/none' });
    await expect(deadRedis.ping()).rejects.toThrow();
    await expect(deadPg.ping()).rejects.toThrow();
    await Promise.all([deadRedis.close(), deadPg.close()]);
  });
});
