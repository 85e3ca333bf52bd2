import { spawn, type ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import pg from 'pg';

/** Finds a free loopback port by binding port 0. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

export async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function redisAnswers(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 1_500, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

export function onPath(binary: string): boolean {
  const dirs = (process.env.PATH ?? '').split(':');
  return dirs.some((d) => {
    try {
      return statSync(`${d}/${binary}`).isFile();
    } catch {
      return false;
    }
  });
}

/** Starts a throwaway redis-server on a free loopback port, keeping nothing on disk; `args` are extra server options. */
export async function startRedisServer(args: string[] = []): Promise<{ url: string; port: number; stop: () => Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', ...args], {
    stdio: 'ignore',
  });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 50; i++) {
    if (await redisAnswers(url)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}
