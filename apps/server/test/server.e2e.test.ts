import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { readEmbeddedConnection } from '@ito/embedded';
import { migrationsFolder } from '@ito/ledger';
import { freshDatabase, redisForTests } from '../../../test/support/db.js';
import { freePort } from '../../../test/support/services.js';
import { MAIN, expectCleanLogs, homes, spawnServer, stopWithSigterm, waitReady } from './support/server.js';

const tmpHomes = homes();
const newHome = () => tmpHomes.create();

afterAll(() => tmpHomes.removeAll());

const redis = redisForTests();
const prefix = `srv${randomBytes(4).toString('hex')}`;

/** Every migration the journal lists, by tag: what a started server's database must have applied. */
const JOURNAL = JSON.parse(readFileSync(join(migrationsFolder(), 'meta', '_journal.json'), 'utf8')) as { entries: Array<{ tag: string; when: number }> };

/** The migrations drizzle recorded as applied (by their creation time), and whether the ledger's tables exist. */
async function migrationState(client: pg.Client): Promise<{ applied: number[]; tables: string[] }> {
  const journal = await client.query<{ t: string | null }>(`select to_regclass('drizzle.__drizzle_migrations')::text as t`);
  const applied = journal.rows[0]!.t ? await client.query<{ created_at: string }>('select created_at::text from drizzle.__drizzle_migrations order by id') : { rows: [] };
  const tables = await client.query<{ name: string }>(
    `select table_name as name from information_schema.tables where table_schema = 'public' and table_name = any($1) order by table_name`,
    [['events', 'event_chain', 'idempotency_keys', 'runs']],
  );
  return { applied: applied.rows.map((r) => Number(r.created_at)), tables: tables.rows.map((r) => r.name) };
}

describe.skipIf(!redis.url)(`ito-server on external PostgreSQL and Redis${redis.url ? '' : ` (skipped: ${redis.skipReason})`}`, () => {
  it('serves /readyz 200 and exits 0 on SIGTERM', async () => {
    const db = await freshDatabase();
    try {
      const port = await freePort();
      const server = spawnServer(['start'], {
        ITO_HOME: newHome(),
        ITO_PORT: String(port),
        ITO_DATABASE_URL: db.url,
        ITO_REDIS_URL: redis.url!,
        // Its own prefix on the shared Redis, removed afterwards, so no other test's server takes its jobs.
        ITO_QUEUE_PREFIX: prefix,
      });
      await waitReady(port, server);
      const ready = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as { ok: boolean };
      expect(ready.ok).toBe(true);
      expect(await stopWithSigterm(server)).toBe(0);
      expectCleanLogs(server.stderr(), new URL(db.url).password || null);
      expect(server.stderr()).toContain('"queue":"redis"');
    } finally {
      await db.drop();
      const client = new Redis(redis.url!);
      const left = await client.keys(`${prefix}:*`);
      if (left.length > 0) await client.del(...left);
      client.disconnect();
    }
  }, 90_000);
});

describe('ito-server on the embedded default (no database, no Redis configured)', () => {
  it('starts embedded PostgreSQL, serves /readyz, stops cleanly and reuses the data on the next start', async () => {
    const home = newHome();
    const port = await freePort();
    const first = spawnServer(['start'], { ITO_HOME: home, ITO_PORT: String(port) });
    await waitReady(port, first, 90_000);
    // The operator tool finds the running database through the same ITO_HOME.
    const url = await readEmbeddedConnection(home);
    expect(url).not.toBeNull();
    const client = new pg.Client({ connectionString: url! });
    await client.connect();
    // Ready means migrated: /readyz alone would pass on an empty database.
    expect(JOURNAL.entries.length).toBeGreaterThanOrEqual(4);
    expect(await migrationState(client)).toEqual({ applied: JOURNAL.entries.map((e) => e.when), tables: ['event_chain', 'events', 'idempotency_keys', 'runs'] });
    await client.query('create table e2e_marker (v text)');
    await client.query(`insert into e2e_marker values ('kept')`);
    await client.end();
    expect(await stopWithSigterm(first)).toBe(0);
    expectCleanLogs(first.stderr(), new URL(url!).password);
    expect(first.stderr()).toContain('"queue":"postgres"');
    expect(await readEmbeddedConnection(home)).toBeNull();

    const second = spawnServer(['start'], { ITO_HOME: home, ITO_PORT: String(port) });
    await waitReady(port, second, 90_000);
    expect(second.stderr()).not.toContain('initialising embedded PostgreSQL');
    const again = new pg.Client({ connectionString: (await readEmbeddedConnection(home))! });
    await again.connect();
    const { rows } = await again.query<{ v: string }>('select v from e2e_marker');
    await again.end();
    expect(rows).toEqual([{ v: 'kept' }]);
    expect(await stopWithSigterm(second)).toBe(0);
  }, 180_000);
});

describe('ito-server configuration errors', () => {
  it('exits non-zero with one line naming ITO_PORT for ITO_PORT=abc', () => {
    const res = spawnSync(process.execPath, [MAIN, 'start'], {
      env: { PATH: process.env.PATH ?? '', ITO_HOME: newHome(), ITO_PORT: 'abc' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(res.status).not.toBe(0);
    const lines = res.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/ITO_PORT/);
  });

  it('exits 2 with usage for an unknown role', () => {
    const res = spawnSync(process.execPath, [MAIN, 'start', '--role', 'everything'], { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' });
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/--role must be one of api, worker, monitor/);
  });
});
