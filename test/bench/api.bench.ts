/**
 * `npm run bench:api -- --json [--requests N] [--clients C]`
 *
 * 50 concurrent clients submit full train requests (each with its own approved confirmation and its own
 * idempotency key) and read the run's status back; beside it, in the same process and run, a bare Fastify
 * route doing one INSERT under the same concurrency. Reports train requests/s, p50/p99 latency, and the ratio.
 * Runs against ITO_DATABASE_URL's server (default the local one), in scratch databases it drops afterwards.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import pg from 'pg';
import { buildApp, createAdminService, createApiLedger } from '@ito/api';
import { createLogger } from '@ito/config';
import { manifestDigest } from '@ito/contracts';
import { migrateDatabase } from '@ito/ledger';
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const json = args.includes('--json');
const flag = (name: string, dflt: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const REQUESTS = flag('--requests', 2000);
const CLIENTS = flag('--clients', 50);
const adminUrl = process.env.ITO_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const manifest = readFileSync(new URL('../../../shared/examples/manifest.json', import.meta.url), 'utf8');
const say = (line: string) => {
  if (!json) process.stderr.write(`${line}\n`);
};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function scratchDb(tag: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `ito_bench_${tag}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/**
 * Runs `total` jobs through `clients` concurrent loops. A job may return the latency it wants recorded (the
 * train call alone, say); otherwise its whole duration is recorded.
 */
async function drive(total: number, clients: number, job: (i: number) => Promise<number | void>) {
  let next = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        const t0 = performance.now();
        const measured = await job(i);
        latencies.push(typeof measured === 'number' ? measured : performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { seconds, perSecond: total / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

async function benchTrain() {
  const db = await scratchDb('api');
  await migrateDatabase(db.url);
  const pool = new pg.Pool({ connectionString: db.url, max: 20 });
  const logger = createLogger({ level: 'warn' });
  const ledger = createApiLedger(pool);
  const app = await buildApp({ logger, readiness: [], pool, ledger, rateLimit: { max: 1_000_000, timeWindowMs: 60_000 } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const admin = createAdminService({ pool, ledger });
  const tenant = await admin.createTenant({ name: 'bench' });
  const start = new Date(Date.now() - 3600_000);
  const booking = await admin.createBooking({
    tenant_id: tenant.tenant_id,
    gpu: 'h200',
    nodes: 2,
    gpus_per_node: 8,
    region: 'us-east-1',
    fabric: 'infiniband',
    term_start: start.toISOString(),
    term_end: new Date(start.getTime() + 30 * 86400_000).toISOString(),
    rate_usd_per_gpu_hour: 2.5,
  });
  const digest = manifestDigest(manifest);
  const headers = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

  // Setup, not measured: one confirmation through the API (to learn its binding), then approved copies of it.
  const first = await (
    await fetch(`${base}/v1/confirmations`, { method: 'POST', headers: headers(tenant.requester_key), body: JSON.stringify({ action: 'train.create', booking_id: booking.booking_id, manifest, manifest_digest: digest }) })
  ).json();
  const template = (await pool.query('select * from confirmations where ref = $1', [first.data.confirmation_ref])).rows[0];
  const refs = Array.from({ length: REQUESTS }, (_, i) => `cfm_bench${String(i).padStart(8, '0')}${randomBytes(8).toString('hex')}`);
  await pool.query(
    `insert into confirmations (ref, tenant_id, action, booking_id, run_id, manifest_digest, cost_usd, max_incremental_cost_usd, status, requested_by, details, created_at, expires_at)
     select r, $2, $3, $4, null, $5, $6, $7, 'approved', $8, $9, now(), now() + interval '1 hour' from unnest($1::text[]) as r`,
    [refs, tenant.tenant_id, template.action, template.booking_id, template.manifest_digest, template.cost_usd, template.max_incremental_cost_usd, template.requested_by, template.details],
  );

  let failures = 0;
  const result = await drive(REQUESTS, CLIENTS, async (i) => {
    const t0 = performance.now();
    const r = await fetch(`${base}/v1/runs`, {
      method: 'POST',
      headers: { ...headers(tenant.requester_key), 'idempotency-key': `bench-${i}` },
      body: JSON.stringify({ booking_id: booking.booking_id, manifest, manifest_digest: digest, confirmation_ref: refs[i] }),
    });
    const body = await r.json();
    const trainMs = performance.now() - t0;
    if (r.status !== 201) {
      failures++;
      return trainMs;
    }
    const s = await fetch(`${base}/v1/runs/${body.data.run_id}`, { headers: headers(tenant.requester_key) });
    await s.arrayBuffer();
    return trainMs;
  });
  const runs = Number((await pool.query('select count(*) as n from runs')).rows[0].n);
  await app.close();
  await pool.end();
  await db.drop();
  return { ...result, failures, runs };
}

/** The baseline: a bare Fastify route doing one INSERT, same concurrency, same machine, same run. */
async function benchBare() {
  const db = await scratchDb('bare');
  const pool = new pg.Pool({ connectionString: db.url, max: 20 });
  await pool.query('create table t (id bigserial primary key, k text not null unique, body jsonb not null, created_at timestamptz not null default now())');
  const app = Fastify();
  app.post('/insert', async (req) => {
    const { rows } = await pool.query('insert into t (k, body) values ($1, $2) returning id', [(req.body as { k: string }).k, JSON.stringify(req.body)]);
    return { ok: true, data: { id: rows[0].id } };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const result = await drive(REQUESTS, CLIENTS, async (i) => {
    const r = await fetch(`${base}/insert`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ k: `bare-${i}`, manifest }) });
    await r.arrayBuffer();
  });
  await app.close();
  await pool.end();
  await db.drop();
  return result;
}

const bare = await benchBare();
say(`bare route: ${bare.perSecond.toFixed(0)} req/s, p50 ${bare.p50.toFixed(1)} ms, p99 ${bare.p99.toFixed(1)} ms`);
const trainResult = await benchTrain();
say(`train: ${trainResult.perSecond.toFixed(0)} req/s (each followed by a status read), train p50 ${trainResult.p50.toFixed(1)} ms, p99 ${trainResult.p99.toFixed(1)} ms, runs ${trainResult.runs}, failures ${trainResult.failures}`);
const ratio = trainResult.perSecond / bare.perSecond;
say(`ratio train/bare: ${ratio.toFixed(3)} (goal ≥ 0.25); train p99 goal < 50 ms`);
const data = {
  clients: CLIENTS,
  requests: REQUESTS,
  train_requests_per_s: Number(trainResult.perSecond.toFixed(1)),
  train_p50_ms: Number(trainResult.p50.toFixed(2)),
  train_p99_ms: Number(trainResult.p99.toFixed(2)),
  runs_created: trainResult.runs,
  failures: trainResult.failures,
  bare_insert_requests_per_s: Number(bare.perSecond.toFixed(1)),
  bare_p50_ms: Number(bare.p50.toFixed(2)),
  bare_p99_ms: Number(bare.p99.toFixed(2)),
  ratio: Number(ratio.toFixed(3)),
};
if (json) process.stdout.write(`${JSON.stringify({ ok: true, live_api_contacted: false, notice: null, data })}\n`);
process.exit(0);
