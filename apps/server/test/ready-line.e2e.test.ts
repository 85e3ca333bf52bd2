import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../../test/support/db.js';
import { freePort } from '../../../test/support/services.js';
import { MAIN, stopWithSigterm, waitReady } from './support/server.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ito-ready-line-'));
  dirs.push(dir);
  return dir;
}

describe('ito-server tells a person at a terminal where it is and how to stop it', () => {
  it('prints one "ready at …; Ctrl-C stops it" line on a terminal, and none into a pipe', async () => {
    const db = await freshDatabase();
    try {
      const port = await freePort();
      const env = { PATH: process.env.PATH ?? '', ITO_HOME: home(), ITO_PORT: String(port), ITO_DATABASE_URL: db.url, ITO_LOG_LEVEL: 'warn' };
      // `script` gives the server a pseudo-terminal for its stdout, as a person's shell would.
      const child = spawn('script', ['-qfec', `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(MAIN)} start`, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
      let terminal = '';
      child.stdout.on('data', (c: Buffer) => (terminal += c));
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      const deadline = Date.now() + 90_000;
      while (!terminal.includes('Ctrl-C stops it') && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 100));
      expect(terminal).toContain(`ito-server: ready at http://127.0.0.1:${port}; Ctrl-C stops it`);
      expect(terminal.match(/ready at/g)).toHaveLength(1);
      // Ctrl-C on the terminal stops it.
      child.stdin.write('\u0003');
      const stopTimer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      expect(await exited).toBe(0);
      clearTimeout(stopTimer);

      // Into a pipe (a log file, a supervisor) the line stays out: stdout carries nothing.
      const piped = spawn(process.execPath, [MAIN, 'start'], { env: { ...env, ITO_HOME: home() }, stdio: ['ignore', 'pipe', 'ignore'] });
      let stdout = '';
      piped.stdout.on('data', (c: Buffer) => (stdout += c));
      const server = { child: piped, stderr: () => '', exited: new Promise<number | null>((r) => piped.once('exit', (code) => r(code))) };
      await waitReady(port, server);
      expect(await stopWithSigterm(server)).toBe(0);
      expect(stdout).toBe('');
    } finally {
      await db.drop();
    }
  }, 120_000);
});
