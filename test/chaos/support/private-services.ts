import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../support/services.js';

/**
 * PostgreSQL and Redis instances of the test's own, on free loopback ports and in a temporary directory, so a
 * scenario can restart them under load without touching the machine's shared services. PostgreSQL comes from the
 * Debian binaries (/usr/lib/postgresql/<version>/bin); Redis keeps an append-only file fsynced on every write, so a
 * restart loses no queued job, and never evicts.
 */
export function postgresBinaries(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const version = readdirSync(root).sort((a, b) => Number(b) - Number(a)).find((v) => existsSync(join(root, v, 'bin', 'pg_ctl')));
  return version ? join(root, version, 'bin') : null;
}

function unprivilegedUser(name: string): { uid: number; gid: number } {
  const id = (flag: string) => Number(spawnSync('id', [flag, name], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  const gid = id('-g');
  if (!(uid > 0 && gid > 0)) throw new Error(`running as root, and there is no unprivileged ${name} user to run PostgreSQL as`);
  return { uid, gid };
}

export interface PrivatePostgres {
  url: string;
  /** Stops it (fast: open connections are cut), waits `downMs`, starts it again on the same port and data. */
  restart(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinaries();
  if (!bin) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
  const dir = mkdtempSync(join(tmpdir(), 'ito-chaos-pg-'));
  const data = join(dir, 'data');
  const port = await freePort();
  // PostgreSQL refuses to run as root: as root, run it as the unprivileged `postgres` user, owning its directory.
  const owner = process.getuid?.() === 0 ? unprivilegedUser('postgres') : null;
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const run = (cmd: string, args: string[]) => {
    const r = spawnSync(join(bin, cmd), args, { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', LANG: 'C' }, ...(owner ?? {}) });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stdout} ${r.stderr}`);
  };
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const start = () =>
    run('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-t', '60', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`, 'start']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async restart(downMs) {
      run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      await new Promise((r) => setTimeout(r, downMs));
      start();
    },
    async stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export interface PrivateRedis {
  url: string;
  /** Shuts it down (it writes its append-only file), waits `downMs`, starts it again on the same port and data. */
  restart(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'ito-chaos-redis-'));
  const port = await freePort();
  let child: ReturnType<typeof spawn> | null = null;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--maxmemory-policy', 'noeviction'], {
      stdio: 'ignore',
    });
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      if (spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout.trim() === 'PONG') return;
    }
    throw new Error('the private redis-server did not answer');
  };
  const shutdown = async () => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    async restart(downMs) {
      await shutdown();
      await new Promise((r) => setTimeout(r, downMs));
      await start();
    },
    async stop() {
      await shutdown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
