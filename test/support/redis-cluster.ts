import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './services.js';

export interface LocalRedisCluster {
  /** A URL naming one master (the seed ITO_REDIS_CLUSTER=1 expects). */
  url: string;
  ports: number[];
  stop: () => Promise<void>;
}

/**
 * A three-master Redis Cluster on free loopback ports, no replicas, nothing kept on disk but the node files in
 * a temporary folder. Resolves once every node reports cluster_state:ok; stop() kills the nodes and the folder.
 */
export async function startRedisCluster(masters = 3): Promise<LocalRedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'ito-redis-cluster-'));
  const ports: number[] = [];
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            c.once('exit', () => resolve());
            c.kill('SIGTERM');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freePort();
      ports.push(port);
      children.push(
        spawn(
          'redis-server',
          [
            '--bind', '127.0.0.1', '--port', String(port), '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`),
            '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction', '--dir', dir,
          ],
          { stdio: 'ignore' },
        ),
      );
    }
    for (const port of ports) await untilAnswers(port, () => Promise.resolve(true));
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout} ${created.stderr}`);
    for (const port of ports) {
      await untilAnswers(port, async (r) => /cluster_state:ok/.test(String(await r.call('CLUSTER', 'INFO'))));
    }
    return { url: `redis://127.0.0.1:${ports[0]}`, ports, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Polls one node until `ready` holds: the nodes need a moment to agree on the slot map after create. */
async function untilAnswers(port: number, ready: (r: Redis) => Promise<boolean>): Promise<void> {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    for (let i = 0; i < 300; i++) {
      try {
        if (client.status !== 'ready') await client.connect();
        if ((await client.ping()) === 'PONG' && (await ready(client))) return;
      } catch {
        // not listening yet, or not agreed yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`redis node on port ${port} never got ready`);
  } finally {
    client.disconnect();
  }
}
