import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../../test/support/db.js';
import { onPath, startRedisServer } from '../../../test/support/services.js';
import { QueueStoreUnfitError, createQueueKit, evictionPolicyOf } from '../src/index.js';

type Server = Awaited<ReturnType<typeof startRedisServer>>;

/** Throwaway servers on free loopback ports: the shared Redis is never reconfigured. */
describe.skipIf(!onPath('redis-server'))('the queue store refuses a Redis that evicts keys', () => {
  let evicting: Server;
  let evictingNoConfig: Server;
  let durable: Server;

  beforeAll(async () => {
    [evicting, evictingNoConfig, durable] = await Promise.all([
      startRedisServer(['--maxmemory-policy', 'allkeys-lru']),
      // As on managed Redis services: CONFIG is disabled, INFO still answers.
      startRedisServer(['--maxmemory-policy', 'volatile-ttl', '--rename-command', 'CONFIG', '']),
      startRedisServer(['--maxmemory-policy', 'noeviction']),
    ]);
  });
  afterAll(async () => {
    await Promise.all([evicting, evictingNoConfig, durable].filter(Boolean).map((s) => s.stop()));
  });

  it('rejects allkeys-lru, naming the policy and the one it needs', async () => {
    const kit = createQueueKit({ kind: 'redis', redisUrl: evicting.url });
    try {
      const refusal = kit.assertDurable();
      await expect(refusal).rejects.toBeInstanceOf(QueueStoreUnfitError);
      await expect(refusal).rejects.toThrow(/maxmemory-policy is allkeys-lru; the queues need noeviction/);
    } finally {
      await kit.close();
    }
  });

  it('reads the policy from INFO memory when CONFIG is disabled, and still rejects', async () => {
    const kit = createQueueKit({ kind: 'redis', redisUrl: evictingNoConfig.url });
    try {
      await expect(kit.assertDurable()).rejects.toThrow(/maxmemory-policy is volatile-ttl;/);
    } finally {
      await kit.close();
    }
  });

  it('accepts noeviction, and the PostgreSQL backend, which never evicts', async () => {
    const kit = createQueueKit({ kind: 'redis', redisUrl: durable.url });
    const db = await freshDatabase();
    const pgKit = createQueueKit({ kind: 'postgres', databaseUrl: db.url });
    try {
      await expect(kit.assertDurable()).resolves.toBeUndefined();
      await expect(pgKit.assertDurable()).resolves.toBeUndefined();
    } finally {
      await Promise.all([kit.close(), pgKit.close()]);
      await db.drop();
    }
  });

  it('reads the same policy through CONFIG GET and through INFO', async () => {
    const { Redis } = await import('ioredis');
    const plain = new Redis(evicting.url, { lazyConnect: true });
    const noConfig = new Redis(evictingNoConfig.url, { lazyConnect: true });
    try {
      expect(await evictionPolicyOf(plain)).toBe('allkeys-lru');
      expect(await evictionPolicyOf(noConfig)).toBe('volatile-ttl');
    } finally {
      plain.disconnect();
      noConfig.disconnect();
    }
  });
});
