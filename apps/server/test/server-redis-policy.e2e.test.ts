import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../../test/support/db.js';
import { onPath, startRedisServer } from '../../../test/support/services.js';
import { homes, spawnServer } from './support/server.js';

const tmpHomes = homes();
afterAll(() => tmpHomes.removeAll());

describe.skipIf(!onPath('redis-server'))('ito-server on a Redis that evicts keys', () => {
  let redis: Awaited<ReturnType<typeof startRedisServer>>;
  beforeAll(async () => {
    // A server of this test's own: the shared Redis is never reconfigured.
    redis = await startRedisServer(['--maxmemory-policy', 'allkeys-lru']);
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('refuses to start the worker role with one line and exit 3, leaving no queue key behind', async () => {
    const db = await freshDatabase();
    try {
      const server = spawnServer(['start', '--role', 'worker'], { ITO_HOME: tmpHomes.create(), ITO_DATABASE_URL: db.url, ITO_REDIS_URL: redis.url });
      expect(await server.exited, server.stderr()).toBe(3);
      const refusal = server.stderr().split('\n').filter((l) => l.startsWith('ito-server: '));
      expect(refusal).toEqual([
        'ito-server: refusing to start: Redis maxmemory-policy is allkeys-lru; the queues need noeviction, since an evicting Redis silently drops queued jobs (set maxmemory-policy noeviction)',
      ]);
      // No scheduler registered, no job enqueued, nothing appended.
      const client = new Redis(redis.url, { lazyConnect: true });
      try {
        expect(await client.dbsize()).toBe(0);
      } finally {
        client.disconnect();
      }
      const ledger = new pg.Client({ connectionString: db.url });
      await ledger.connect();
      try {
        expect((await ledger.query('select count(*)::int as n from events')).rows[0].n).toBe(0);
      } finally {
        await ledger.end();
      }
    } finally {
      await db.drop();
    }
  }, 60_000);
});
