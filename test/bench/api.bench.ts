/**
 * `npm run bench:api -- --json [--requests N] [--clients C]`
 *
 * 50 concurrent clients submit full train requests (each with its own approved confirmation and its own
 * idempotency key) and read the run's status back; beside it, in the same run, a bare Fastify route doing one
 * INSERT under the same concurrency. Reports train requests/s, p50/p99 latency of the train call, and the ratio.
 * Runs against ITO_DATABASE_URL's server (default the local one), in scratch databases it drops afterwards.
 *
 * Each server runs in a child process of its own (`--serve train|bare`), so the load generator and the server
 * under test do not share one event loop; the clients use node:http with a keep-alive agent.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import pg from 'pg';
import { buildApp, createAdminService, createApiLedger } from '@ito/api';
import { createLogger } from '@ito/config';
import { manifestDigest } from '@ito/contracts';
import { migrateDatabase } from '@ito/ledger';
import { h200Booking } from '../fixtures/bookings.js';
import { createScratchDatabase } from '../support/scratch-db.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const flag = (name: string, dflt: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const REQUESTS = flag('--requests', 2000);
const CLIENTS = flag('--clients', 50);
const adminUrl = process.env.ITO_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const manifest = readFileSync(new URL('../../examples/manifest.json', import.meta.url), 'utf8');
const say = (line: string) => {
  if (!json) process.stderr.write(`${line}\n`);
};

interface Served {
  url: string;
  key?: string;
  booking_id?: string;
  refs?: string[];
}

// ---------------------------------------------------------------- the servers (child processes)

async function serveTrain(): Promise<{ served: Served; stop: () => Promise<Record<string, unknown>> }> {
  const db = await createScratchDatabase(adminUrl, 'ito_bench_api');
  await migrateDatabase(db.url);
  const pool = new pg.Pool({ connectionString: db.url, max: 20 });
  const ledger = createApiLedger(pool);
  const app = await buildApp({ logger: createLogger({ level: 'warn' }), readiness: [], pool, ledger, rateLimit: { max: 1_000_000, timeWindowMs: 60_000 } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const admin = createAdminService({ pool, ledger });
  const tenant = await admin.createTenant({ name: 'bench' });
  const booking = await admin.createBooking(h200Booking(tenant.tenant_id));
  // Setup, not measured: one confirmation through the API (to learn its binding), then approved copies of it.
  const inject = await app.inject({
    method: 'POST',
    url: '/v1/confirmations',
    headers: { authorization: `Bearer ${tenant.requester_key}` },
    payload: { action: 'train.create', booking_id: booking.booking_id, manifest, manifest_digest: manifestDigest(manifest) },
  });
  const template = (await pool.query('select * from confirmations where ref = $1', [inject.json().data.confirmation_ref])).rows[0];
  const refs = Array.from({ length: REQUESTS }, () => `cfm_${randomBytes(16).toString('hex')}`);
  await pool.query(
    `insert into confirmations (ref, tenant_id, action, booking_id, run_id, manifest_digest, cost_usd, max_incremental_cost_usd, status, requested_by, details, created_at, expires_at)
     select r, $2, $3, $4, null, $5, $6, $7, 'approved', $8, $9, now(), now() + interval '1 hour' from unnest($1::text[]) as r`,
    [refs, tenant.tenant_id, template.action, template.booking_id, template.manifest_digest, template.cost_usd, template.max_incremental_cost_usd, template.requested_by, template.details],
  );
  return {
    served: { url, key: tenant.requester_key, booking_id: booking.booking_id, refs },
    stop: async () => {
      const runs = Number((await pool.query('select count(*) as n from runs')).rows[0].n);
      await app.close();
      await pool.end();
      await db.drop();
      return { runs };
    },
  };
}

async function serveBare(): Promise<{ served: Served; stop: () => Promise<Record<string, unknown>> }> {
  const db = await createScratchDatabase(adminUrl, 'ito_bench_bare');
  const pool = new pg.Pool({ connectionString: db.url, max: 20 });
  await pool.query('create table t (id bigserial primary key, k text not null unique, body jsonb not null, created_at timestamptz not null default now())');
  const app = Fastify();
  app.post('/insert', async (req) => {
    const { rows } = await pool.query('insert into t (k, body) values ($1, $2) returning id', [(req.body as { k: string }).k, JSON.stringify(req.body)]);
    return { ok: true, live_api_contacted: true, notice: null, data: { id: rows[0].id } };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    served: { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` },
    stop: async () => {
      await app.close();
      await pool.end();
      await db.drop();
      return {};
    },
  };
}

async function serve(mode: string): Promise<void> {
  const { served, stop } = mode === 'train' ? await serveTrain() : await serveBare();
  process.stdout.write(`${JSON.stringify(served)}\n`);
  // The parent closes our stdin when its load is done; then report and clean up.
  process.stdin.resume();
  process.stdin.on('end', async () => {
    process.stdout.write(`${JSON.stringify(await stop())}\n`);
    process.exit(0);
  });
}

// ---------------------------------------------------------------- the load generator (this process)

function startServer(mode: 'train' | 'bare'): Promise<{ served: Served; finish: () => Promise<Record<string, unknown>> }> {
  const child = spawn(process.execPath, [...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : []), '--import', 'tsx', fileURLToPath(import.meta.url), '--serve', mode, '--requests', String(REQUESTS)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return lines.next().then((first) => {
    if (first.done) throw new Error(`the ${mode} server exited before it was ready`);
    return {
      served: JSON.parse(first.value) as Served,
      finish: async () => {
        child.stdin!.end();
        const last = await lines.next();
        return last.done ? {} : (JSON.parse(last.value) as Record<string, unknown>);
      },
    };
  });
}

const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });

function call(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent, headers: body ? { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** Runs `total` jobs through `clients` concurrent loops; each job returns the latency it wants recorded. */
async function drive(total: number, clients: number, job: (i: number) => Promise<number>) {
  let next = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < total; i = next++) latencies.push(await job(i));
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { seconds, perSecond: total / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

async function benchBare() {
  const { served, finish } = await startServer('bare');
  const result = await drive(REQUESTS, CLIENTS, async (i) => {
    const t0 = performance.now();
    await call(`${served.url}/insert`, 'POST', {}, JSON.stringify({ k: `bare-${i}`, manifest }));
    return performance.now() - t0;
  });
  await finish();
  return result;
}

async function benchTrain() {
  const { served, finish } = await startServer('train');
  const auth = { authorization: `Bearer ${served.key!}` };
  const digest = manifestDigest(manifest);
  let failures = 0;
  const result = await drive(REQUESTS, CLIENTS, async (i) => {
    const t0 = performance.now();
    const r = await call(
      `${served.url}/v1/runs`,
      'POST',
      { ...auth, 'idempotency-key': `bench-${i}` },
      JSON.stringify({ booking_id: served.booking_id, manifest, manifest_digest: digest, confirmation_ref: served.refs![i] }),
    );
    const trainMs = performance.now() - t0;
    if (r.status !== 201) failures++;
    else await call(`${served.url}/v1/runs/${r.body.data.run_id}`, 'GET', auth);
    return trainMs;
  });
  const { runs } = await finish();
  return { ...result, failures, runs: Number(runs) };
}

async function main(): Promise<void> {
  const bare = await benchBare();
  say(`bare route: ${bare.perSecond.toFixed(0)} req/s, p50 ${bare.p50.toFixed(1)} ms, p99 ${bare.p99.toFixed(1)} ms`);
  const train = await benchTrain();
  say(`train: ${train.perSecond.toFixed(0)} req/s (each followed by a status read), train p50 ${train.p50.toFixed(1)} ms, p99 ${train.p99.toFixed(1)} ms, runs ${train.runs}, failures ${train.failures}`);
  const ratio = train.perSecond / bare.perSecond;
  say(`ratio train/bare: ${ratio.toFixed(3)} (goal ≥ 0.25); train p99 goal < 50 ms`);
  const data = {
    clients: CLIENTS,
    requests: REQUESTS,
    train_requests_per_s: Number(train.perSecond.toFixed(1)),
    train_p50_ms: Number(train.p50.toFixed(2)),
    train_p99_ms: Number(train.p99.toFixed(2)),
    runs_created: train.runs,
    failures: train.failures,
    bare_insert_requests_per_s: Number(bare.perSecond.toFixed(1)),
    bare_p50_ms: Number(bare.p50.toFixed(2)),
    bare_p99_ms: Number(bare.p99.toFixed(2)),
    ratio: Number(ratio.toFixed(3)),
  };
  if (json) process.stdout.write(`${JSON.stringify({ ok: true, live_api_contacted: false, notice: null, data })}\n`);
  agent.destroy();
}

const serveIndex = args.indexOf('--serve');
if (serveIndex >= 0) await serve(args[serveIndex + 1]!);
else await main();
