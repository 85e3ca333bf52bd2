import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { ITO_ADMIN, runCli } from '../../apps/cli/test/support/cli.js';
import { EXAMPLE_MANIFEST } from '../support/api.js';
import { freshDatabase, redisForTests } from '../support/db.js';
import { processGroup, waitReady, type Proc } from '../support/processes.js';
import { startRedisCluster } from '../support/redis-cluster.js';
import { freePort, onPath } from '../support/services.js';

/**
 * The production topology as separate processes on this machine: two API processes, two workers and a monitor
 * (each `ito-server start --role …`), two simulated agents, one PostgreSQL database and Redis, with a training
 * run driven through the real CLI against both APIs. Then the same on a three-master Redis Cluster. The
 * pipeline is whatever the code defines: the test holds the run to its outcome and its ledger, not its numbers.
 */
const ROOT = resolve(import.meta.dirname, '..', '..');
const SERVER = join(ROOT, 'apps/server/dist/main.js');
const AGENT = join(ROOT, 'apps/agent/dist/main.js');

interface QueueStore {
  env: Record<string, string>;
  /** Every key the run left under the prefix, read from each master. */
  keys: (prefix: string) => Promise<string[]>;
  /** Removes what the test wrote and stops what it started. */
  release: (prefix: string) => Promise<void>;
}

const shared = redisForTests();
const TOPOLOGIES: Array<{ name: string; skip: string | null; store: () => Promise<QueueStore> }> = [
  {
    name: 'one Redis',
    skip: shared.url ? null : shared.skipReason,
    store: async () => {
      const client = new Redis(shared.url!, { lazyConnect: true });
      const keys = (prefix: string) => client.keys(`${prefix}:*`);
      return {
        env: { ITO_REDIS_URL: shared.url! },
        keys,
        // The shared server is used by other tests at once: only this test's prefix is removed.
        release: async (prefix) => {
          const left = await keys(prefix);
          if (left.length > 0) await client.del(...left);
          client.disconnect();
        },
      };
    },
  },
  {
    name: 'a three-master Redis Cluster',
    skip: onPath('redis-server') && onPath('redis-cli') ? null : 'redis-server and redis-cli are not on PATH',
    store: async () => {
      const cluster = await startRedisCluster(3);
      const client = new Cluster([{ host: '127.0.0.1', port: cluster.ports[0]! }]);
      return {
        env: { ITO_REDIS_URL: cluster.url, ITO_REDIS_CLUSTER: '1' },
        keys: async (prefix) => {
          await client.ping();
          return (await Promise.all(client.nodes('master').map((n) => n.keys(`${prefix}:*`)))).flat();
        },
        release: async () => {
          client.disconnect();
          await cluster.stop();
        },
      };
    },
  },
];

const procs = processGroup();
const dirs: string[] = [];
afterAll(async () => {
  // Whatever a failed test left running.
  await procs.killAll();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

for (const topology of TOPOLOGIES) {
  describe.skipIf(topology.skip !== null)(`the production topology as processes, queues on ${topology.name}${topology.skip ? ` (skipped: ${topology.skip})` : ''}`, () => {
    it('trains through two APIs, two workers and a monitor to succeeded', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'ito-topology-e2e-'));
      dirs.push(dir);
      const manifestPath = join(dir, 'manifest.json');
      writeFileSync(manifestPath, EXAMPLE_MANIFEST);
      chmodSync(manifestPath, 0o644);
      const prefix = `topo_${randomBytes(4).toString('hex')}`;
      const db = await freshDatabase();
      const store = await topology.store();
      const common = { ITO_DATABASE_URL: db.url, ITO_QUEUE_PREFIX: prefix, ITO_HEARTBEAT_INTERVAL_S: '1', ITO_LOG_LEVEL: 'warn', ITO_STORAGE_SIMULATED_SCHEMES: 's3', ...store.env };
      const servers: Proc[] = [];
      const agents: Proc[] = [];
      try {
        const ports = [await freePort(), await freePort()];
        const apiUrls = ports.map((p) => `http://127.0.0.1:${p}`);
        ports.forEach((port, i) => servers.push(procs.start(`api-${i + 1}`, SERVER, ['start', '--role', 'api'], { ...common, ITO_HOME: join(dir, `api-${i + 1}`), ITO_PORT: String(port) })));
        for (const i of [1, 2]) servers.push(procs.start(`worker-${i}`, SERVER, ['start', '--role', 'worker'], { ...common, ITO_HOME: join(dir, `worker-${i}`) }));
        servers.push(procs.start('monitor', SERVER, ['start', '--role', 'monitor'], { ...common, ITO_HOME: join(dir, 'monitor') }));
        await Promise.all(apiUrls.map((url, i) => waitReady(url, servers[i]!)));

        const admin = async (args: string[]) => {
          const res = await runCli([...args, '--json'], { entry: ITO_ADMIN, env: { ITO_DATABASE_URL: db.url, ITO_HOME: join(dir, 'admin') } });
          expect(res.code, `${args.join(' ')}: ${res.stdout} ${res.stderr}`).toBe(0);
          return res.json().data;
        };
        const tenant = await admin(['tenant', 'create', '--name', 'acme', '--requester-principal', 'ml@acme', '--approver-principal', 'finance@acme']);
        const now = Date.now();
        const booking = await admin([
          'booking', 'create', '--tenant', tenant.tenant_id, '--gpu', 'h200', '--nodes', '2', '--gpus-per-node', '8', '--region', 'us-east-1',
          '--fabric', 'infiniband', '--term-start', new Date(now - 3600_000).toISOString(), '--term-end', new Date(now + 30 * 86400_000).toISOString(),
          '--rate-usd-per-gpu-hour', '2.5',
        ]);
        // One agent dials each API: a node's reports may land on either replica.
        for (const [i, name] of ['gpu-01', 'gpu-02'].entries()) {
          const node = await admin(['node', 'register', '--booking', booking.booking_id, '--name', name]);
          agents.push(
            procs.start(name, AGENT, ['--executor', 'simulated', '--progress-interval-ms', '100'], {
              ITO_API_URL: apiUrls[i]!,
              ITO_NODE_CREDENTIAL: node.node_credential,
              ITO_TIME_SCALE: '100000',
              ITO_LOG_LEVEL: 'warn',
              ITO_HOME: join(dir, name),
            }),
          );
        }

        const ito = async (api: 0 | 1, args: string[], key: string = tenant.requester_key) => {
          const res = await runCli([...args, '--json'], { env: { ITO_API_URL: apiUrls[api]!, ITO_API_KEY: key, ITO_HOME: join(dir, `cli-${api}`) }, timeoutMs: 120_000 });
          expect(res.code, `${args.join(' ')} via api-${api + 1}: ${res.stdout} ${res.stderr}`).toBe(0);
          return res.json().data;
        };
        await ito(0, ['plan', '--booking', booking.booking_id, '--manifest', manifestPath]);
        const ref = (await ito(0, ['confirm', 'request', '--action', 'train.create', '--booking', booking.booking_id, '--manifest', manifestPath])).confirmation_ref;
        await ito(1, ['confirm', 'approve', ref], tenant.approver_key);
        const run = await ito(0, ['train', '--booking', booking.booking_id, '--manifest', manifestPath, '--confirmation-ref', ref, '--idempotency-key', `topology-${prefix}`]);
        const final = await ito(1, ['status', run.run_id, '--watch', '--interval', '200']);
        expect(final.state, `${JSON.stringify(final)}\n${procs.transcript()}`).toBe('succeeded');

        // Both APIs read the same ledger.
        const [viaFirst, viaSecond] = await Promise.all([ito(0, ['events', run.run_id]), ito(1, ['events', run.run_id])]);
        const events = viaFirst.events as Array<{ type: string; data: any }>;
        expect(viaSecond.events).toEqual(events);
        const types = events.map((e) => e.type);
        expect(types.slice(0, 2)).toEqual(['RunReserved', 'RunConfirmed']);
        expect(types).toContain('PipelinePlanned');
        expect(events.filter((e) => e.type === 'StageFailed').map((e) => e.data.reason)).toEqual([]);
        expect(types.at(-1)).toBe('RunSucceeded');
        const started = events.filter((e) => e.type === 'StageStarted').map((e) => e.data.stage as string);
        const completed = events.filter((e) => e.type === 'StageCompleted').map((e) => e.data.stage as string);
        expect(started.length).toBeGreaterThan(1);
        expect(new Set(completed)).toEqual(new Set(started));
        // Both agents took part, each reaching the control plane through its own API.
        const nodes = new Set(events.filter((e) => e.type === 'StageStarted' && e.data.tasks).flatMap((e) => e.data.tasks.map((t: any) => t.node_id)));
        expect(nodes.size).toBe(2);

        // The queues ran on this store under the test's prefix, each queue's keys under one hash tag.
        const keys = await store.keys(prefix);
        expect(keys.length).toBeGreaterThan(0);
        for (const key of keys) expect(key).toMatch(new RegExp(`^${prefix}:\\{[a-z.-]+\\}:`));
        expect(keys.some((k) => k.startsWith(`${prefix}:{pipeline-stages}:`))).toBe(true);
      } finally {
        const agentExits = await procs.stop(agents);
        const serverExits = await procs.stop(servers);
        await store.release(prefix).catch(() => undefined);
        await db.drop().catch(() => undefined);
        expect(agentExits, procs.transcript()).toEqual(agents.map(() => 0));
        expect(serverExits, procs.transcript()).toEqual(servers.map(() => 0));
        expect(procs.transcript()).not.toMatch(/ito_(sk|nc)_[A-Za-z0-9_-]{20}/);
      }
    }, 150_000);
  });
}
