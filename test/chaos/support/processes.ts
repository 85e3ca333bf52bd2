import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..', '..', '..');
export const SERVER = join(ROOT, 'apps/server/dist/main.js');
export const AGENT = join(ROOT, 'apps/agent/dist/main.js');

export interface Proc {
  name: string;
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  /** SIGKILL, and wait for the exit. */
  kill9(): Promise<void>;
}

/** A built binary with exactly the environment given (plus PATH); its output is kept for failure messages. */
export function startProcess(name: string, entry: string, args: string[], env: Record<string, string>): Proc {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run npm run build first`);
  const child = spawn(process.execPath, [entry, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (c: Buffer) => {
    output += c;
    if (output.length > 400_000) output = output.slice(-200_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((r) => child.once('exit', (code, signal) => r(code ?? (signal ? -1 : null))));
  return {
    name,
    child,
    output: () => output,
    exited,
    async kill9() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

export async function waitReady(url: string, server: Proc): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (server.child.exitCode !== null) throw new Error(`${server.name} exited: ${server.output()}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return;
    } catch {
      // not yet listening
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${server.name} never got ready: ${server.output()}`);
}
