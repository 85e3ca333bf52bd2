import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { ITO_ADMIN, runCli } from '../../apps/cli/test/support/cli.js';
import { EXAMPLE_MANIFEST } from '../support/api.js';
import { freshDatabase, redisForTests } from '../support/db.js';
import { freePort } from '../support/services.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const SERVER = join(ROOT, 'apps/server/dist/main.js');
const AGENT = join(ROOT, 'apps/agent/dist/main.js');
const STAGES = ['data_prep', 'planning', 'pretrain', 'eval_pretrain', 'mid_train', 'eval_mid_train', 'long_context', 'eval_long_context', 'sft', 'dpo', 'rlvr', 'eval_post_training'];

interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** A built binary with exactly the environment given (plus PATH), its output kept for the failure message. */
function start(entry: string, args: string[], env: Record<string, string>): Proc {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run npm run build first`);
  const child = spawn(process.execPath, [entry, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c));
  child.stderr!.on('data', (c: Buffer) => (output += c));
  return { child, output: () => output, exited: new Promise((r) => child.once('exit', (code) => r(code))) };
}

async function waitReady(url: string, server: Proc): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (server.child.exitCode !== null) throw new Error(`ito-server exited: ${server.output()}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return;
    } catch {
      // not yet listening
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`ito-server never got ready: ${server.output()}`);
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const redis = redisForTests();
// On the shared Redis each run has a prefix of its own, removed afterwards: no other test's server takes its jobs.
const prefix = `e2e${randomBytes(4).toString('hex')}`;
const BACKENDS = [
  { name: 'Redis', env: redis.url ? { ITO_REDIS_URL: redis.url, ITO_QUEUE_PREFIX: prefix } : null, why: redis.skipReason },
  { name: "BullMQ's PostgreSQL backend", env: {}, why: null },
];
afterAll(async () => {
  if (!redis.url) return;
  const client = new Redis(redis.url);
  const left = await client.keys(`${prefix}:*`);
  if (left.length > 0) await client.del(...left);
  client.disconnect();
});

for (const backend of BACKENDS) {
  describe.skipIf(!backend.env)(`the example manifest through ito, ito-server and two ito-agents on ${backend.name}${backend.env ? '' : ` (skipped: ${backend.why})`}`, () => {
    it('trains every stage to succeeded, with checkpoints listed and metrics served', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'ito-pipeline-e2e-'));
      dirs.push(dir);
      const manifestPath = join(dir, 'manifest.json');
      writeFileSync(manifestPath, EXAMPLE_MANIFEST);
      chmodSync(manifestPath, 0o644);
      const db = await freshDatabase();
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const server = start(SERVER, ['start'], {
        ITO_HOME: join(dir, 'server'),
        ITO_PORT: String(port),
        ITO_DATABASE_URL: db.url,
        ITO_HEARTBEAT_INTERVAL_S: '1',
        ITO_LOG_LEVEL: 'warn',
        ITO_STORAGE_SIMULATED_SCHEMES: 's3',
        ...backend.env!,
      });
      const agents: Proc[] = [];
      try {
        await waitReady(url, server);
        const admin = (args: string[]) => runCli([...args, '--json'], { entry: ITO_ADMIN, env: { ITO_DATABASE_URL: db.url, ITO_HOME: join(dir, 'admin') } });
        const tenant = (await admin(['tenant', 'create', '--name', 'acme', '--requester-principal', 'ml@acme', '--approver-principal', 'finance@acme'])).json().data;
        const now = Date.now();
        const booking = (
          await admin([
            'booking', 'create', '--tenant', tenant.tenant_id, '--gpu', 'h200', '--nodes', '2', '--gpus-per-node', '8', '--region', 'us-east-1',
            '--fabric', 'infiniband', '--term-start', new Date(now - 3600_000).toISOString(), '--term-end', new Date(now + 30 * 86400_000).toISOString(),
            '--rate-usd-per-gpu-hour', '2.5',
          ])
        ).json().data;
        for (const name of ['gpu-01', 'gpu-02']) {
          const node = (await admin(['node', 'register', '--booking', booking.booking_id, '--name', name])).json().data;
          // The credential reaches the agent through its environment only.
          agents.push(
            start(AGENT, ['--executor', 'simulated', '--progress-interval-ms', '100'], {
              ITO_API_URL: url,
              ITO_NODE_CREDENTIAL: node.node_credential,
              ITO_TIME_SCALE: '100000',
              ITO_LOG_LEVEL: 'warn',
              ITO_HOME: join(dir, name),
            }),
          );
        }
        const ito = async (args: string[], key: string = tenant.requester_key) => {
          const res = await runCli([...args, '--json'], { env: { ITO_API_URL: url, ITO_API_KEY: key, ITO_HOME: join(dir, 'cli') }, timeoutMs: 120_000 });
          expect(res.code, `${args.join(' ')}: ${res.stdout} ${res.stderr}`).toBe(0);
          return res.json().data;
        };
        await ito(['plan', '--booking', booking.booking_id, '--manifest', manifestPath]);
        const ref = (await ito(['confirm', 'request', '--action', 'train.create', '--booking', booking.booking_id, '--manifest', manifestPath])).confirmation_ref;
        await ito(['confirm', 'approve', ref], tenant.approver_key);
        const run = await ito(['train', '--booking', booking.booking_id, '--manifest', manifestPath, '--confirmation-ref', ref, '--idempotency-key', 'e2e-first-run']);
        const final = await ito(['status', run.run_id, '--watch', '--interval', '200']);
        expect(final.state, JSON.stringify(final)).toBe('succeeded');

        const events = (await ito(['events', run.run_id])).events as Array<{ type: string; data: any }>;
        // No attempt failed (the reasons say why if one did), so every stage started once, in order.
        expect(events.filter((e) => e.type === 'StageFailed').map((e) => e.data.reason)).toEqual([]);
        expect(events.filter((e) => e.type === 'StageStarted').map((e) => e.data.stage)).toEqual(STAGES);
        expect(events.filter((e) => e.type === 'EvalGatePassed').map((e) => e.data.stage)).toEqual(['pretrain', 'mid_train', 'long_context', 'post_training']);
        expect(events.at(-1)!.type).toBe('RunSucceeded');
        // Every task went to one of the booking's two nodes, and both took part.
        const nodes = new Set(events.filter((e) => e.type === 'StageStarted' && e.data.tasks).flatMap((e) => e.data.tasks.map((t: any) => t.node_id)));
        expect(nodes.size).toBe(2);
        const checkpoints = (await ito(['checkpoints', run.run_id])).checkpoints;
        expect(checkpoints).toHaveLength(3);
        const metrics = await ito(['metrics', run.run_id]);
        expect(metrics.stages.map((s: any) => s.status)).toEqual(STAGES.map(() => 'completed'));
        expect(metrics.series.length).toBeGreaterThan(10);
        // The losses the agents reported fall over training.
        const losses = metrics.series.filter((p: any) => p.stage === 'pretrain').map((p: any) => p.loss);
        expect(losses.at(-1)).toBeLessThan(losses[0]);
      } finally {
        for (const a of agents) a.child.kill('SIGTERM');
        const agentExits = await Promise.all(agents.map((a) => a.exited));
        server.child.kill('SIGTERM');
        const serverExit = await server.exited;
        await db.drop().catch(() => undefined);
        expect(agentExits, agents.map((a) => a.output()).join('\n')).toEqual(agents.map(() => 0));
        expect(serverExit, server.output()).toBe(0);
        expect(server.output() + agents.map((a) => a.output()).join('')).not.toMatch(/ito_(sk|nc)_[A-Za-z0-9_-]{20}/);
      }
    }, 180_000);
  });
}
