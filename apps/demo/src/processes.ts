import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';

export interface Managed {
  name: string;
  child: ChildProcess;
  logFile: string;
  exited: Promise<number | null>;
}

/**
 * The long-running processes the demo starts (server, agents). Each one's output goes to its own log file
 * under the demo's directory, so the demo's own output stays readable and the logs stay for the user.
 */
export class Processes {
  private readonly running = new Set<Managed>();

  constructor(private readonly logDir: string) {}

  start(name: string, entry: string, args: string[], env: Record<string, string>): Managed {
    const logFile = join(this.logDir, `${name}.log`);
    const log: WriteStream = createWriteStream(logFile, { flags: 'a', mode: 0o600 });
    const child = spawn(process.execPath, [entry, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(log, { end: false });
    child.stderr!.pipe(log, { end: false });
    const managed: Managed = {
      name,
      child,
      logFile,
      exited: new Promise((resolve) => {
        child.once('error', () => resolve(null));
        child.once('exit', (code) => {
          this.running.delete(managed);
          log.end();
          resolve(code);
        });
      }),
    };
    this.running.add(managed);
    return managed;
  }

  /** Kills one process at once, as a lost node would vanish: no goodbye, no final checkpoint. */
  async kill(managed: Managed): Promise<void> {
    managed.child.kill('SIGKILL');
    await managed.exited;
  }

  /** Stops the others before the server, so agents hand their tasks back while the API still answers. */
  async stopAll(graceMs = 20_000): Promise<void> {
    const order = [...this.running].sort((a, b) => Number(a.name === 'ito-server') - Number(b.name === 'ito-server'));
    for (const group of [order.filter((m) => m.name !== 'ito-server'), order.filter((m) => m.name === 'ito-server')]) {
      await Promise.all(
        group.map(async (m) => {
          m.child.kill('SIGTERM');
          const timer = setTimeout(() => m.child.kill('SIGKILL'), graceMs);
          await m.exited;
          clearTimeout(timer);
        }),
      );
    }
  }
}
