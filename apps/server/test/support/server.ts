import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';

export const MAIN = resolve(import.meta.dirname, '..', '..', 'dist', 'main.js');

export interface Spawned {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

/**
 * Runs the built binary with only the variables given (plus PATH), so the runner's environment cannot leak in.
 * `detached` makes it lead its own process group, as a shell does for a job in a terminal.
 */
export function spawnServer(args: string[], env: Record<string, string>, opts: { detached?: boolean } = {}): Spawned {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: opts.detached ?? false,
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, stderr: () => stderr, exited };
}

export async function waitReady(port: number, server: Spawned, timeoutMs = 60_000): Promise<void> {
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

export async function stopWithSigterm(server: Spawned): Promise<number | null> {
  server.child.kill('SIGTERM');
  return server.exited;
}

/** Temporary ITO_HOMEs, removed by `removeAll` after the file's tests. */
export function homes() {
  const made: string[] = [];
  return {
    create(): string {
      const home = mkdtempSync(join(tmpdir(), 'ito-server-e2e-'));
      made.push(home);
      return home;
    },
    removeAll(): void {
      for (const h of made) rmSync(h, { recursive: true, force: true });
    },
  };
}

/** Every stderr line is one JSON log record, and none carries the database password. */
export function expectCleanLogs(stderr: string, password: string | null): void {
  const lines = stderr.trim().split('\n').filter(Boolean);
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
  if (password) expect(stderr).not.toContain(password);
}
