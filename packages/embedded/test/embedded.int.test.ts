import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddedDataDir, readEmbeddedConnection, sidecarPaths, startEmbeddedPostgres, type EmbeddedPostgres } from '../src/index.js';

// One file, one cluster: initdb costs seconds, so the scenarios share a home and run in order.
const home = mkdtempSync(join(tmpdir(), 'ito-embedded-test-'));
const dataDir = embeddedDataDir(home);
const running: EmbeddedPostgres[] = [];

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

async function start(): Promise<EmbeddedPostgres> {
  const pgServer = await startEmbeddedPostgres({ dataDir, port: 0, database: 'ito' });
  running.push(pgServer);
  return pgServer;
}

/** A pid that certainly belongs to no running process: a child that has already exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

afterAll(async () => {
  for (const s of running) await s.stop();
  rmSync(home, { recursive: true, force: true });
});

describe('embedded PostgreSQL', () => {
  it('initialises a new data directory, listens on loopback with a generated password kept 0600', async () => {
    const first = await start();
    expect(first.port).toBeGreaterThan(0);
    expect(new URL(first.adminUrl).hostname).toBe('127.0.0.1');
    const files = sidecarPaths(dataDir);
    expect(statSync(files.credentials).mode & 0o777).toBe(0o600);
    const creds = JSON.parse(readFileSync(files.credentials, 'utf8')) as { password: string };
    expect(decodeURIComponent(new URL(first.adminUrl).password)).toBe(creds.password);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);

    const [row] = await query<{ addr: string }>(first.databaseUrl, 'select inet_server_addr()::text as addr');
    expect(row?.addr).toMatch(/^127\.0\.0\.1/);

    const wrongPassword = new URL(first.adminUrl);
    wrongPassword.password = 'not-the-password';
    await expect(query(wrongPassword.toString(), 'select 1')).rejects.toThrow(/password authentication failed/);
  });

  it('publishes the running server to readEmbeddedConnection and withdraws it on stop', async () => {
    const current = running.at(-1)!;
    expect(await readEmbeddedConnection(home)).toBe(current.databaseUrl);
    await query(current.databaseUrl, 'create table kept (v text)');
    await query(current.databaseUrl, `insert into kept values ('survives a restart')`);
    await current.stop();
    expect(await readEmbeddedConnection(home)).toBeNull();
  });

  it('reuses the data directory on a second start', async () => {
    const credsBefore = readFileSync(sidecarPaths(dataDir).credentials, 'utf8');
    const second = await start();
    const rows = await query<{ v: string }>(second.databaseUrl, 'select v from kept');
    expect(rows).toEqual([{ v: 'survives a restart' }]);
    expect(readFileSync(sidecarPaths(dataDir).credentials, 'utf8')).toBe(credsBefore);
  });

  it('recovers from a killed previous run: orphaned server and stale postmaster.pid', async () => {
    const previous = running.at(-1)!;
    // The owner "was killed": its server is still up, its record names a dead owner.
    const files = sidecarPaths(dataDir);
    const info = JSON.parse(readFileSync(files.server, 'utf8')) as { pid: number; ownerPid: number };
    writeFileSync(files.server, JSON.stringify({ ...info, ownerPid: deadPid() }));
    const third = await start();
    expect(third.port).not.toBe(previous.port);
    expect(await query<{ v: string }>(third.databaseUrl, 'select v from kept')).toEqual([{ v: 'survives a restart' }]);

    // Now the server itself dies without cleaning up, leaving postmaster.pid behind.
    const thirdInfo = JSON.parse(readFileSync(files.server, 'utf8')) as { pid: number };
    process.kill(thirdInfo.pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    expect(statSync(join(dataDir, 'postmaster.pid')).isFile()).toBe(true);
    const fourth = await start();
    expect(await query<{ v: string }>(fourth.databaseUrl, 'select v from kept')).toEqual([{ v: 'survives a restart' }]);
  });

  it('refuses to start a second server on a directory a live process owns', async () => {
    const files = sidecarPaths(dataDir);
    const info = JSON.parse(readFileSync(files.server, 'utf8')) as Record<string, unknown>;
    // Pretend the running server belongs to another live process (pid 1 always exists).
    writeFileSync(files.server, JSON.stringify({ ...info, ownerPid: 1 }));
    await expect(startEmbeddedPostgres({ dataDir })).rejects.toThrow(/already run by process 1/);
    writeFileSync(files.server, JSON.stringify(info));
  });
});
