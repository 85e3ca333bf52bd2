/**
 * `npm run bench:api -- --json [--small] [--requests N] [--clients C] [--rates 25,50,100] [--seconds S] [--warmup-seconds W]
 *   [--closed-only | --open-only]`
 *
 * Closed loop: C concurrent clients (default 50) submit N full train requests (each with its own approved
 * confirmation and its own idempotency key) and read the run's status back; beside it, in the same run, a bare
 * Fastify route doing one INSERT under the same concurrency. Reports the maximum train requests/s, p50/p99 of the
 * train call, and the ratio to the bare route.
 *
 * Open loop: at each offered rate (trains per second), a train followed by its status read is sent on a fixed
 * schedule for S seconds (default 20, after W seconds of warm-up at the same rate, default 2), however slowly the
 * server answers; latency is measured from the scheduled send time, so a stalled server is not hidden. Beside
 * each rate, the bare INSERT route on the same schedule gives the tail the machine itself adds.
 *
 * With `--json`, stdout is one JSON object: issue 30's goal by name, `train_p99_ratio_to_bare` `{ value, goal, met }`
 * (train p99 ÷ the bare route's p99 at 50 trains/s, open loop, same run; goal ≤ 3), and every measurement under
 * `details`, among them the API process's CPU per train and the SQL round trips of one train (counted in the
 * server). `--small`: 500 requests closed loop, 50 trains/s for 10 s open loop (about a minute); its figures are noise.
 *
 * Runs against ITO_DATABASE_URL's server (default the local one), in scratch databases it drops afterwards. Each
 * server runs in a child process of its own (`--serve train|bare`), so the load generator and the server under
 * test do not share one event loop; the clients use node:http with a keep-alive agent.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import pg from 'pg';
import { buildApp } from '@ito/api';
import { createAdminService, createApiLedger } from '@ito/runs';
import { createLogger } from '@ito/config';
import { manifestDigest } from '@ito/contracts';
import { createEvalBatteryRegistry } from '@ito/evals';
import { createLedger, migrateDatabase } from '@ito/ledger';
import { defaultStorageRegistry } from '@ito/storage';
import { h200Booking } from '../fixtures/bookings.js';
import { SHIPPED_BATTERY } from '../support/api.js';
import { createScratchDatabase } from '../support/scratch-db.js';
import { closedLoop, createCaller, openLoop } from './load.js';
import { cpuSeconds, loadAverage1m } from './proc-cpu.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const SMALL = args.includes('--small');
const flag = (name: string, dflt: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const REQUESTS = flag('--requests', SMALL ? 500 : 2000);
const CLIENTS = flag('--clients', 50);
const RATES = (args.includes('--rates') ? args[args.indexOf('--rates') + 1]! : SMALL ? '50' : '25,50,100').split(',').map(Number);
const SECONDS = flag('--seconds', SMALL ? 10 : 20);
/** The offered rate the goal is stated at, and the goal: train p99 ≤ 3 × the bare route's p99 there. */
const GOAL_RATE = 50;
const GOAL_P99_RATIO = 3;
const WARMUP_SECONDS = flag('--warmup-seconds', 2);
const CLOSED = !args.includes('--open-only');
const OPEN = !args.includes('--closed-only');
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
  /** SQL round trips (client `query` calls, a multi-statement string counting once) of one train and one status read. */
  round_trips?: { train: number; status: number };
}

/** Counts every `query` call on the pool's clients: one call is one round trip to PostgreSQL. */
function countRoundTrips(pool: pg.Pool): () => number {
  let count = 0;
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...a: unknown[]) => unknown;
    (client as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
      count++;
      return query(...a);
    };
  });
  return () => count;
}

// ---------------------------------------------------------------- the servers (child processes)

async function serveTrain(): Promise<{ served: Served; stop: () => Promise<Record<string, unknown>> }> {
  const db = await createScratchDatabase(adminUrl, 'ito_bench_api');
  await migrateDatabase(db.url);
  const pool = new pg.Pool({ connectionString: db.url, max: 20 });
  const roundTrips = countRoundTrips(pool);
  const ledger = createApiLedger(pool);
  const app = await buildApp({ logger: createLogger({ level: 'warn' }), readiness: [], pool, ledger, rateLimit: { max: 1_000_000, timeWindowMs: 60_000 } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const admin = createAdminService({ pool, ledger });
  const tenant = await admin.createTenant({ name: 'bench', requesterPrincipal: 'ml@bench', approverPrincipal: 'finance@bench' });
  const booking = await admin.createBooking(h200Booking(tenant.tenant_id));
  // As the server does at start: the shipped eval battery (the example manifest names it) is registered.
  const operatorDir = mkdtempSync(join(tmpdir(), 'ito-bench-operator-'));
  const batteries = createEvalBatteryRegistry({ pool, ledger: createLedger({ pool }), storage: defaultStorageRegistry(), operatorStorage: `file://${operatorDir}` });
  await batteries.register(SHIPPED_BATTERY.name, SHIPPED_BATTERY.bytes, { ifAbsent: true });
  // Setup, not measured: one confirmation through the API (to learn its binding), then approved copies of it.
  const inject = await app.inject({
    method: 'POST',
    url: '/v1/confirmations',
    headers: { authorization: `Bearer ${tenant.requester_key}` },
    payload: { action: 'train.create', booking_id: booking.booking_id, manifest, manifest_digest: manifestDigest(manifest) },
  });
  if (inject.statusCode !== 201) throw new Error(`the setup confirmation was refused: ${inject.statusCode} ${inject.body}`);
  const template = (await pool.query('select * from confirmations where ref = $1', [inject.json().data.confirmation_ref])).rows[0];
  const refs = Array.from({ length: REQUESTS + 1 }, () => `cfm_${randomBytes(16).toString('hex')}`);
  await pool.query(
    `insert into confirmations (ref, tenant_id, action, booking_id, run_id, manifest_digest, cost_usd, max_incremental_cost_usd, status, requested_by, details, created_at, expires_at)
     select r, $2, $3, $4, null, $5, $6, $7, 'approved', $8, $9, now(), now() + interval '1 hour' from unnest($1::text[]) as r`,
    [refs, tenant.tenant_id, template.action, template.booking_id, template.manifest_digest, template.cost_usd, template.max_incremental_cost_usd, template.requested_by, template.details],
  );
  // One train and its status read, counted (setup, not measured): the last ref is spent here.
  const probeRef = refs.pop()!;
  const headers = { authorization: `Bearer ${tenant.requester_key}` };
  const before = roundTrips();
  const probe = await app.inject({
    method: 'POST',
    url: '/v1/runs',
    headers: { ...headers, 'idempotency-key': 'bench-probe' },
    payload: { booking_id: booking.booking_id, manifest, manifest_digest: manifestDigest(manifest), confirmation_ref: probeRef },
  });
  if (probe.statusCode !== 201) throw new Error(`the probe train was refused: ${probe.body}`);
  const afterTrain = roundTrips();
  await app.inject({ method: 'GET', url: `/v1/runs/${probe.json().data.run_id}`, headers });
  const round_trips = { train: afterTrain - before, status: roundTrips() - afterTrain };
  const loadStart = roundTrips();
  return {
    served: { url, key: tenant.requester_key, booking_id: booking.booking_id, refs, round_trips },
    stop: async () => {
      const queries = roundTrips() - loadStart;
      const runs = Number((await pool.query('select count(*) as n from runs')).rows[0].n) - 1;
      await app.close();
      await pool.end();
      await db.drop();
      rmSync(operatorDir, { recursive: true, force: true });
      return { runs, queries };
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

function startServer(mode: 'train' | 'bare', requests = REQUESTS): Promise<{ served: Served; cpu: () => number; finish: () => Promise<Record<string, unknown>> }> {
  const child = spawn(process.execPath, [...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : []), '--import', 'tsx', fileURLToPath(import.meta.url), '--serve', mode, '--requests', String(requests)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return lines.next().then((first) => {
    if (first.done) throw new Error(`the ${mode} server exited before it was ready`);
    return {
      served: JSON.parse(first.value) as Served,
      cpu: () => cpuSeconds(child.pid!),
      finish: async () => {
        child.stdin!.end();
        const last = await lines.next();
        return last.done ? {} : (JSON.parse(last.value) as Record<string, unknown>);
      },
    };
  });
}

// Open loop must not queue in the client: enough sockets that every scheduled request goes out at once.
const { call, close: closeCaller } = createCaller(Math.max(CLIENTS, 512));

async function benchBare() {
  const { served, finish } = await startServer('bare');
  const result = await closedLoop(REQUESTS, CLIENTS, async (i) => {
    const t0 = performance.now();
    await call(`${served.url}/insert`, 'POST', {}, JSON.stringify({ k: `bare-${i}`, manifest }));
    return performance.now() - t0;
  });
  await finish();
  return result;
}

/** One train (its own key and confirmation) for the served tenant; resolves with the answer. */
function sendTrain(served: Served, i: number) {
  return call(
    `${served.url}/v1/runs`,
    'POST',
    { authorization: `Bearer ${served.key!}`, 'idempotency-key': `bench-${i}` },
    JSON.stringify({ booking_id: served.booking_id, manifest, manifest_digest: manifestDigest(manifest), confirmation_ref: served.refs![i] }),
  );
}

const readStatus = (served: Served, runId: string) => call(`${served.url}/v1/runs/${runId}`, 'GET', { authorization: `Bearer ${served.key!}` });

/** The server's CPU per train (train + status read) and SQL round trips, from its counters over the load. */
function perTrain(served: Served, cpuS: number, trains: number, server: Record<string, unknown>) {
  return {
    api_cpu_ms_per_train_and_status: trains > 0 ? ms((cpuS * 1000) / trains) : null,
    round_trips_per_train: served.round_trips?.train ?? null,
    round_trips_per_status: served.round_trips?.status ?? null,
    round_trips_per_train_and_status_under_load: trains > 0 ? ms(Number(server.queries) / trains) : null,
  };
}

async function benchTrain() {
  const { served, cpu, finish } = await startServer('train');
  const cpu0 = cpu();
  let failures = 0;
  const result = await closedLoop(REQUESTS, CLIENTS, async (i) => {
    const t0 = performance.now();
    const r = await sendTrain(served, i);
    const trainMs = performance.now() - t0;
    if (r.status !== 201) failures++;
    else await readStatus(served, r.body.data.run_id);
    return trainMs;
  });
  const cpuS = cpu() - cpu0;
  const server = await finish();
  return { ...result, failures, runs: Number(server.runs), ...perTrain(served, cpuS, REQUESTS, server) };
}

/** At a fixed offered rate: each train followed by its status read, both timed from the scheduled send. */
async function benchOpenLoop(rate: number) {
  const { served, cpu, finish } = await startServer('train', Math.round(rate * (SECONDS + WARMUP_SECONDS)));
  const cpu0 = cpu();
  const result = await openLoop({ rate, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS }, async (i) => {
    const r = await sendTrain(served, i);
    const trained = performance.now();
    if (r.status !== 201) return null;
    const s = await readStatus(served, r.body.data.run_id);
    return s.status === 200 ? [trained, performance.now()] : null;
  });
  const cpuS = cpu() - cpu0;
  const server = await finish();
  return { ...result, runs: Number(server.runs), ...perTrain(served, cpuS, result.sent, server) };
}

/** The same schedule against the bare INSERT route: the tail the machine itself adds (disk flushes, other load). */
async function benchOpenLoopBare(rate: number) {
  const { served, finish } = await startServer('bare');
  const result = await openLoop({ rate, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS }, async (i) => {
    const r = await call(`${served.url}/insert`, 'POST', {}, JSON.stringify({ k: `bare-${i}`, manifest }));
    return r.status === 200 ? [performance.now()] : null;
  });
  await finish();
  return result;
}

const ms = (v: number) => Number(v.toFixed(2));

async function closedLoopFigures() {
  const bare = await benchBare();
  say(`closed loop, bare route: ${bare.perSecond.toFixed(0)} req/s, p50 ${bare.p50.toFixed(1)} ms, p99 ${bare.p99.toFixed(1)} ms`);
  const train = await benchTrain();
  say(`closed loop, train: ${train.perSecond.toFixed(0)} req/s (each followed by a status read), train p50 ${train.p50.toFixed(1)} ms, p99 ${train.p99.toFixed(1)} ms, runs ${train.runs}, failures ${train.failures}`);
  say(`  API CPU ${train.api_cpu_ms_per_train_and_status} ms per train + status; round trips: train ${train.round_trips_per_train}, status ${train.round_trips_per_status}`);
  const ratio = train.perSecond / bare.perSecond;
  say(`ratio train/bare: ${ratio.toFixed(3)} (goal ≥ 0.25)`);
  return {
    clients: CLIENTS,
    requests: REQUESTS,
    train_requests_per_s: Number(train.perSecond.toFixed(1)),
    train_p50_ms: ms(train.p50),
    train_p99_ms: ms(train.p99),
    runs_created: train.runs,
    failures: train.failures,
    bare_insert_requests_per_s: Number(bare.perSecond.toFixed(1)),
    bare_p50_ms: ms(bare.p50),
    bare_p99_ms: ms(bare.p99),
    ratio: Number(ratio.toFixed(3)),
    api_cpu_ms_per_train_and_status: train.api_cpu_ms_per_train_and_status,
    round_trips_per_train: train.round_trips_per_train,
    round_trips_per_status: train.round_trips_per_status,
    round_trips_per_train_and_status_under_load: train.round_trips_per_train_and_status_under_load,
  };
}

async function openLoopFigures() {
  const rows = [];
  for (const rate of RATES) {
    const bare = await benchOpenLoopBare(rate);
    const r = await benchOpenLoop(rate);
    const [train, cycle] = r.phases;
    const [insert] = bare.phases;
    say(
      `open loop, ${rate} trains/s offered (${r.sentPerSecond.toFixed(1)} sent/s, ${r.measured} measured after ${WARMUP_SECONDS} s warm-up): ` +
        `train p50 ${train?.p50.toFixed(1)} ms, p99 ${train?.p99.toFixed(1)} ms; train + status p50 ${cycle?.p50.toFixed(1)} ms, p99 ${cycle?.p99.toFixed(1)} ms; ` +
        `failures ${r.failures}, most in flight ${r.maxInFlight}, send lag p99 ${r.sendLagP99.toFixed(1)} ms; ` +
        `bare INSERT at the same rate p50 ${insert?.p50.toFixed(1)} ms, p99 ${insert?.p99.toFixed(1)} ms; ` +
        `API CPU ${r.api_cpu_ms_per_train_and_status} ms per train + status`,
    );
    rows.push({
      offered_trains_per_s: rate,
      sent_per_s: Number(r.sentPerSecond.toFixed(1)),
      measured: r.measured,
      failures: r.failures,
      train_p50_ms: ms(train?.p50 ?? 0),
      train_p99_ms: ms(train?.p99 ?? 0),
      train_max_ms: ms(train?.max ?? 0),
      cycle_p50_ms: ms(cycle?.p50 ?? 0),
      cycle_p99_ms: ms(cycle?.p99 ?? 0),
      max_in_flight: r.maxInFlight,
      send_lag_p99_ms: ms(r.sendLagP99),
      runs_created: r.runs,
      bare_p50_ms: ms(insert?.p50 ?? 0),
      bare_p99_ms: ms(insert?.p99 ?? 0),
      bare_failures: bare.failures,
      train_p99_ratio_to_bare: insert && insert.p99 > 0 && train ? Number((train.p99 / insert.p99).toFixed(3)) : null,
      api_cpu_ms_per_train_and_status: r.api_cpu_ms_per_train_and_status,
      round_trips_per_train: r.round_trips_per_train,
      round_trips_per_train_and_status_under_load: r.round_trips_per_train_and_status_under_load,
    });
  }
  const at50 = rows.find((row) => row.offered_trains_per_s === GOAL_RATE);
  if (at50) say(`train p99 at ${GOAL_RATE} trains/s: ${at50.train_p99_ms} ms (earlier goal < 50 ms: ${at50.train_p99_ms < 50 ? 'met' : 'not met'}), ${at50.train_p99_ratio_to_bare}× the bare route's ${at50.bare_p99_ms} ms`);
  return { seconds: SECONDS, warmup_seconds: WARMUP_SECONDS, rates: rows };
}

async function main(): Promise<void> {
  const load0 = loadAverage1m();
  const closed = CLOSED ? await closedLoopFigures() : undefined;
  const open = OPEN ? await openLoopFigures() : undefined;
  const at = open?.rates.find((row) => row.offered_trains_per_s === GOAL_RATE && row.failures === 0 && row.bare_failures === 0);
  const value = at?.train_p99_ratio_to_bare ?? Number.NaN;
  const train_p99_ratio_to_bare = {
    value: Number.isFinite(value) ? value : null,
    goal: `<= ${GOAL_P99_RATIO} (train p99 ÷ the bare one-INSERT route's p99, open loop at ${GOAL_RATE} trains/s, same run, no failures)`,
    met: Number.isFinite(value) && value <= GOAL_P99_RATIO,
  };
  say(`goal train_p99_ratio_to_bare ${train_p99_ratio_to_bare.goal}: ${train_p99_ratio_to_bare.value ?? 'not measured'} ${train_p99_ratio_to_bare.met ? 'met' : 'NOT met'}`);
  const details = { small: SMALL, load_average_1m: { before: load0, after: loadAverage1m() }, ...(closed ? { closed_loop: closed } : {}), ...(open ? { open_loop: open } : {}) };
  if (json) process.stdout.write(`${JSON.stringify({ train_p99_ratio_to_bare, details })}\n`);
  closeCaller();
}

const serveIndex = args.indexOf('--serve');
if (serveIndex >= 0) await serve(args[serveIndex + 1]!);
else await main();
