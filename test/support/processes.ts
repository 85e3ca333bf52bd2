import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface Proc {
  name: string;
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * Built binaries started as separate processes, each with exactly the environment given (plus PATH), their
 * output kept for failure messages. `killAll` ends whichever are still running, for an afterAll that must
 * leave nothing behind even when the test failed half-way.
 */
export function processGroup() {
  const started: Proc[] = [];
  return {
    start(name: string, entry: string, args: string[], env: Record<string, string>): Proc {
      if (!existsSync(entry)) throw new Error(`${entry} is missing: run npm run build first`);
      const child = spawn(process.execPath, [entry, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout!.on('data', (c: Buffer) => (output += c));
      child.stderr!.on('data', (c: Buffer) => (output += c));
      const proc = { name, child, output: () => output, exited: new Promise<number | null>((r) => child.once('exit', (code) => r(code))) };
      started.push(proc);
      return proc;
    },
    /** SIGTERM, then the exit codes in the same order. */
    async stop(procs: Proc[]): Promise<Array<number | null>> {
      for (const p of procs) if (running(p)) p.child.kill('SIGTERM');
      return Promise.all(procs.map((p) => p.exited));
    },
    /** Every process still running gets SIGKILL; resolves when all have exited. */
    async killAll(): Promise<void> {
      const alive = started.filter(running);
      for (const p of alive) p.child.kill('SIGKILL');
      await Promise.all(alive.map((p) => p.exited));
    },
    /** The output of every process, labelled, for a failure message. */
    transcript(): string {
      return started.map((p) => `--- ${p.name} (exit ${p.child.exitCode ?? p.child.signalCode ?? 'running'})\n${p.output()}`).join('\n');
    },
  };
}

function running(p: Proc): boolean {
  return p.child.exitCode === null && p.child.signalCode === null;
}

/** Polls /readyz until it answers 200; fails at once if the process exits. */
export async function waitReady(url: string, server: Proc, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null) throw new Error(`${server.name} exited: ${server.output()}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${server.name} never got ready: ${server.output()}`);
}
