import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddedDataDir, sidecarPaths } from '@ito/embedded';
import { freePort } from '../../../test/support/services.js';
import { expectCleanLogs, homes, spawnServer, waitReady } from './support/server.js';

const tmpHomes = homes();
afterAll(() => tmpHomes.removeAll());

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The process group of a live process, from /proc/<pid>/stat (the field after the state). */
function processGroup(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && alive(pid)) await new Promise((r) => setTimeout(r, 100));
  return !alive(pid);
}

/**
 * `npm start` in a terminal: the server leads the terminal's foreground group, and Ctrl-C sends SIGINT to the
 * whole group (closing the terminal, SIGHUP). A supervisor stopping a service group sends SIGTERM the same way.
 * Each must stop everything.
 */
describe('ito-server on the embedded default, stopped by a signal to its whole process group', () => {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`${signal}: exits 0 with clean logs, stops the embedded PostgreSQL and leaves no pg.server.json`, async () => {
      const home = tmpHomes.create();
      const port = await freePort();
      const server = spawnServer(['start'], { ITO_HOME: home, ITO_PORT: String(port) }, { detached: true });
      const files = sidecarPaths(embeddedDataDir(home));
      let postgres = { pid: 0 };
      try {
        await waitReady(port, server, 90_000);
        postgres = JSON.parse(readFileSync(files.server, 'utf8')) as { pid: number };
        expect(alive(postgres.pid)).toBe(true);
        // The database leads a group of its own, so a signal to the terminal's group never reaches it.
        expect(processGroup(server.child.pid!)).toBe(server.child.pid);
        expect(processGroup(postgres.pid)).not.toBe(server.child.pid);

        process.kill(-server.child.pid!, signal);
        expect(await server.exited).toBe(0);

        const stderr = server.stderr();
        expectCleanLogs(stderr, null);
        expect(stderr).not.toMatch(/Unhandled|terminating connection|administrator command/);
        const records = stderr.trim().split('\n').map((l) => JSON.parse(l) as { level: number; msg: string; clean?: boolean });
        const shutdown = records.slice(records.findIndex((r) => r.msg === 'shutting down'));
        expect(shutdown.length).toBeGreaterThan(1);
        // Nothing during the shutdown warns: no connection is cut under a client, no step fails.
        expect(shutdown.filter((r) => r.level >= 40)).toEqual([]);
        expect(records.find((r) => r.msg === 'ito-server stopped')).toMatchObject({ clean: true });
        expect(existsSync(files.server)).toBe(false);
        expect(existsSync(join(embeddedDataDir(home), 'postmaster.pid'))).toBe(false);
        expect(await waitGone(postgres.pid, 5_000)).toBe(true);
      } finally {
        // A failed assertion must not leave a server or its database running.
        if (alive(server.child.pid!)) process.kill(-server.child.pid!, 'SIGKILL');
        if (postgres.pid && alive(postgres.pid)) process.kill(postgres.pid, 'SIGKILL');
      }
    }, 120_000);
  }
});
