/**
 * `ito-server start` (the built apps/server/dist/main.js) as a child process on a database the bench made, so
 * the load generator and the server under test each have their own event loop and their own CPU time. Resolves
 * once /readyz answers 200; `stop()` sends SIGTERM and waits for the exit (SIGKILL after 10 s). With
 * `BENCH_CPU_PROF=<dir>` in the bench's environment the server runs under `node --cpu-prof` into that directory.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../support/services.js';

export interface ChildServer {
  url: string;
  pid: number;
  stop: () => Promise<void>;
}

export async function startChildServer(opts: { databaseUrl: string; roles?: string[]; env?: Record<string, string>; readyTimeoutMs?: number }): Promise<ChildServer> {
  const home = mkdtempSync(join(tmpdir(), 'ito-bench-server-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const main = new URL('../../apps/server/dist/main.js', import.meta.url).pathname;
  // BENCH_CPU_PROF=<dir>: the server writes a V8 CPU profile there when it exits (open with Chrome DevTools).
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : [];
  const child = spawn(process.execPath, [...profile, main, 'start', ...(opts.roles ?? []).flatMap((r) => ['--role', r])], {
    env: {
      PATH: process.env.PATH ?? '',
      ITO_HOME: home,
      ITO_PORT: String(port),
      ITO_DATABASE_URL: opts.databaseUrl,
      ITO_LOG_LEVEL: process.env.ITO_BENCH_SERVER_LOG_LEVEL ?? 'error',
      ITO_STORAGE_SIMULATED_SCHEMES: 's3',
      ...opts.env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(home, { recursive: true, force: true });
  };
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`ito-server exited (${child.exitCode}) before it was ready`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error('ito-server did not get ready');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, pid: child.pid!, stop };
}
