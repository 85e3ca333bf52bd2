import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI_DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist');
export const ITO = join(CLI_DIST, 'ito.js');
export const ITO_ADMIN = join(CLI_DIST, 'ito-admin.js');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as one JSON document (throws in the test if it is not exactly one). */
  json: () => any;
}

/**
 * Runs the BUILT entry as a subprocess with exactly the environment given (nothing inherited except PATH),
 * the way ECC's bridge does. Build first with `npm run build`.
 */
export function runCli(args: string[], opts: { env?: Record<string, string>; input?: string; entry?: string; timeoutMs?: number } = {}): Promise<CliRun> {
  const entry = opts.entry ?? ITO;
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first`);
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [entry, ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr, json: () => JSON.parse(stdout) });
    });
    child.stdin.end(opts.input ?? '');
  });
}
