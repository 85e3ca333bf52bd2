import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { readEmbeddedConnection } from '@ito/embedded';
import { freshDatabase, redisForTests } from '../../../test/support/db.js';
import { freePort } from '../../../test/support/services.js';

const MAIN = resolve(import.meta.dirname, '..', 'dist', 'main.js');
const homes: string[] = [];

interface Spawned {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Runs the built binary with only the variables given (plus PATH), so the runner's environment cannot leak in. */
function spawnServer(args: string[], env: Record<string, string>): Spawned {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
  const child = spawn(process.execPath, [MAIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, stderr: () => stderr, exited };
}

async function waitReady(port: number, server: Spawned, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null) throw new Error(`ito-server exited early: ${server.stderr()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`/readyz never turned 200: ${server.stderr()}`);
}

async function stopWithSigterm(server: Spawned): Promise<number | null> {
  server.child.kill('SIGTERM');
  return server.exited;
}

function newHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'ito-server-e2e-'));
  homes.push(home);
  return home;
}

/** Every stderr line is one JSON log record, and none carries the database password. */
function expectCleanLogs(stderr: string, password: string | null): void {
  const lines = stderr.trim().split('\n').filter(Boolean);
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
  if (password) expect(stderr).not.toContain(password);
}

afterAll(() => {
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

const redis = redisForTests();

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
      });
      await waitReady(port, server);
      const ready = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as { ok: boolean };
      expect(ready.ok).toBe(true);
      expect(await stopWithSigterm(server)).toBe(0);
      expectCleanLogs(server.stderr(), new URL(db.url).password || null);
      expect(server.stderr()).toContain('"queue":"redis"');
    } finally {
      await db.drop();
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
