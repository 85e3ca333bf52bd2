import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { onPath, postgresAnswers, redisAnswers, startRedisServer } from './services.js';

/**
 * Starts (or finds) the real services the suite runs against, once per test run:
 * - PostgreSQL: ITO_TEST_DATABASE_URL, else the local server on 127.0.0.1:5432, else an embedded one.
 * - A migrated template database that every test file clones (CREATE DATABASE … TEMPLATE) for isolation.
 * - Redis: ITO_TEST_REDIS_URL, else 127.0.0.1:6379, else a redis-server started on a free port, else none,
 *   in which case Redis-backend tests are skipped and say why.
 */
declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    templateDb: string;
    redisUrl: string | null;
    redisSkipReason: string | null;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const teardown: Array<() => Promise<void>> = [];

  let adminUrl = process.env.ITO_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  if (!(await postgresAnswers(adminUrl))) {
    const { startEmbeddedPostgres } = await import('@ito/embedded');
    const dir = mkdtempSync(join(tmpdir(), 'ito-test-pg-'));
    const embedded = await startEmbeddedPostgres({ dataDir: join(dir, 'data'), port: 0 });
    adminUrl = embedded.adminUrl;
    teardown.push(async () => {
      await embedded.stop();
      rmSync(dir, { recursive: true, force: true });
    });
    process.stderr.write(`[test] no PostgreSQL answered; started an embedded one at port ${embedded.port}\n`);
  }

  const templateDb = `ito_tpl_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${templateDb}`);
  await admin.end();
  const templateUrl = withDatabase(adminUrl, templateDb);
  const { migrateDatabase } = await import('@ito/ledger');
  await migrateDatabase(templateUrl);
  teardown.push(async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    // Drop every clone this run made, then the template itself.
    const { rows } = await c.query<{ datname: string }>(`select datname from pg_database where datname like $1`, [`${templateDb}%`]);
    for (const row of rows) await c.query(`drop database if exists ${row.datname} with (force)`);
    await c.end();
  });

  let redisUrl: string | null = process.env.ITO_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  let redisSkipReason: string | null = null;
  if (!(await redisAnswers(redisUrl))) {
    if (onPath('redis-server')) {
      const redis = await startRedisServer();
      redisUrl = redis.url;
      teardown.push(redis.stop);
    } else {
      redisUrl = null;
      redisSkipReason = 'no Redis answered on 127.0.0.1:6379 and no redis-server binary is on PATH';
      process.stderr.write(`[test] Redis-backend tests will be SKIPPED: ${redisSkipReason}\n`);
    }
  }
  if (process.env.CI && redisUrl === null) throw new Error(`CI must run the Redis-backend tests: ${redisSkipReason}`);

  project.provide('pgAdminUrl', adminUrl);
  project.provide('templateDb', templateDb);
  project.provide('redisUrl', redisUrl);
  project.provide('redisSkipReason', redisSkipReason);

  return async () => {
    for (const fn of teardown.reverse()) await fn();
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
