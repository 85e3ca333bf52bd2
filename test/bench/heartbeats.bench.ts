/**
 * `npm run bench:heartbeats -- --json [--rates 500,1000,2000,4000,8000,12500] [--seconds 10] [--warmup-seconds 2]
 *   [--interval-s 2] [--small]`
 *
 * Simulated agents heartbeat `ito-server start --role api` (a child process on a scratch database with
 * rates × interval registered nodes) over HTTP keep-alive on loopback, open loop: at each offered rate the beats
 * go out on a fixed schedule whatever the server does, node after node (each node beats once per interval at
 * that rate), and latency is measured from the scheduled send time. Each beat is what an idle agent sends: no
 * task, eight healthy GPUs. Beside each rate, in the same run, the same schedule against a bare Fastify route
 * with no database (bare-server.ts, its own child process): the ceiling of HTTP + JSON on this machine now.
 *
 * Reported per rate and per server: achieved beats/s, p50/p99/max latency from the scheduled time, errors, and
 * the cores used by the server, the load generator (this process) and PostgreSQL. A rate is held when at least
 * 99 % of the offered beats were answered 200, and p99 < 50 ms. Goal (issue 13): 12,500/s held. A server that
 * answers less than 80 % of a rate is not offered the higher ones (its backlog would only grow).
 * `--small`: rates 500,1000,2000 for 4 s each (under a minute in all).
 *
 * After the ramp, one more heartbeat step at half the bare route's maximum rate (answered beats/s, the best of
 * its steps). `--json` then names the goals of issue 30, each `{ value, goal, met }`:
 * `heartbeat_cpu_ms_per_beat` (API + PostgreSQL CPU per answered beat in that step; ≤ 0.15),
 * `heartbeat_ratio_to_bare` (the heartbeat route's maximum rate ÷ the bare route's, same run; ≥ 0.8) and
 * `heartbeat_p99_ms_at_half` (p99 of that step; < 50).
 */
import { benchArgs } from './args.js';
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { createAdminService, createApiLedger, hashSecret, newId, newSecret } from '@ito/runs';
import { migrateDatabase } from '@ito/ledger';
import { h200Booking } from '../fixtures/bookings.js';
import { createScratchDatabase } from '../support/scratch-db.js';
import { startChildServer } from './child-server.js';
import { cpuSeconds, cpuSecondsMeter, loadAverage1m, postgresCpuSource, selfCpuSeconds } from './proc-cpu.js';

const { json, small: SMALL, opt } = benchArgs();
const RATES = opt('--rates', SMALL ? '500,1000,2000' : '500,1000,2000,4000,8000,12500').split(',').map(Number);
const SECONDS = Number(opt('--seconds', SMALL ? '4' : '10'));
const WARMUP_SECONDS = Number(opt('--warmup-seconds', SMALL ? '1' : '2'));
const INTERVAL_S = Number(opt('--interval-s', '2'));
const P99_GOAL_MS = 50;
/** How long answers still outstanding after the last send are waited for; later ones count as errors. */
const DRAIN_MS = 10_000;
/** A server that answers less than this share of the offered rate is saturated: higher rates are not offered to it. */
const SATURATED = 0.8;
const GOAL_RATE = 12_500;
const adminUrl = process.env.ITO_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Progress goes to stderr, so `--json` keeps stdout to the one result line. */
const say = (line: string) => process.stderr.write(`${line}\n`);
if (RATES.some((r) => !(r > 0)) || !(SECONDS > 0) || !(WARMUP_SECONDS >= 0)) throw new Error('--rates, --seconds and --warmup-seconds must be positive numbers');

const BEAT = JSON.stringify({
  tasks: [],
  gpus: Array.from({ length: 8 }, (_, index) => ({ index, healthy: true, temperature_c: 61, utilization: 0.97, memory_used_gb: 70.5, ecc_errors: 0 })),
});
const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
const round = (n: number, d = 1) => Number(n.toFixed(d));

/** A booking holds at most 4,096 nodes: the fleet is spread over bookings of this many. */
const NODES_PER_BOOKING = 1_000;

/** Registers `count` nodes: one through the operator's service (its event), the rest as rows beside it. */
async function seedNodes(databaseUrl: string, count: number): Promise<string[]> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  try {
    const ledger = createApiLedger(pool);
    const admin = createAdminService({ pool, ledger });
    const tenant = await admin.createTenant({ name: 'bench', requesterPrincipal: 'ml@bench', approverPrincipal: 'finance@bench' });
    const bookings: string[] = [];
    for (let i = 0; i < Math.ceil(count / NODES_PER_BOOKING); i++) {
      bookings.push((await admin.createBooking(h200Booking(tenant.tenant_id, { nodes: NODES_PER_BOOKING }))).booking_id);
    }
    const first = await admin.registerNode({ bookingId: bookings[0]!, name: 'node-0' });
    const credentials = [first.node_credential];
    for (let i = 1; i < count; i++) credentials.push(newSecret('nc'));
    const rest = credentials.slice(1);
    // Setup, not measured: the node rows the API authenticates against, without an event each.
    await pool.query(
      `insert into nodes (node_id, tenant_id, booking_id, name, credential_hash)
       select id, $2, b, 'node-' || ord, h from unnest($1::text[], $3::text[], $4::text[]) with ordinality as x(id, b, h, ord)`,
      [rest.map(() => newId('node')), tenant.tenant_id, rest.map((_, i) => bookings[Math.floor((i + 1) / NODES_PER_BOOKING)]!), rest.map(hashSecret)],
    );
    // Statistics for the new rows now, not when autovacuum gets to them: the credential lookup is planned once per
    // connection, and a plan made for a one-row table scans 25,000 rows a beat.
    await pool.query('analyze nodes');
    return credentials;
  } finally {
    await pool.end();
  }
}

async function startBare(): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./bare-server.ts', import.meta.url).pathname], { stdio: ['ignore', 'pipe', 'inherit'] });
  const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
  if (first.done) throw new Error('the bare server exited before it was ready');
  const exited = new Promise((r) => child.once('exit', r));
  return { url: JSON.parse(first.value).url, pid: child.pid!, stop: async () => void (child.kill('SIGTERM'), await exited) };
}

/**
 * Between steps: waits until the server answers a probe within 50 ms (a saturated step leaves a backlog the
 * server is still working off, which would land on the next step), for at most 30 s.
 */
async function settle(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const t0 = performance.now();
    try {
      await fetch(`${url}/readyz`);
    } catch {
      // not answering yet
    }
    if (performance.now() - t0 < 50) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface Step {
  offered_per_s: number;
  nodes: number;
  achieved_per_s: number;
  answered: number;
  errors: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  send_lag_p99_ms: number;
  cpu_cores: Record<string, number>;
  /** CPU milliseconds per answered beat, by process: what a beat costs, whatever share of the cores it got. */
  cpu_ms_per_beat: Record<string, number>;
  held: boolean;
}

/**
 * Open loop: beat i goes out at start + i / rate, sent from a 1 ms tick that sends every beat whose time has come
 * (so answers are read between ticks even when the generator falls behind), node i mod nodes.
 */
async function runStep(url: string, credentials: string[], rate: number, serverPid: number): Promise<Step> {
  const nodes = Math.min(credentials.length, Math.max(1, Math.round(rate * INTERVAL_S)));
  const agent = new Agent({ keepAlive: true, maxSockets: 1024 });
  const total = Math.round(rate * (WARMUP_SECONDS + SECONDS));
  const warmup = Math.round(rate * WARMUP_SECONDS);
  const latencies: number[] = [];
  const lags: number[] = [];
  let errors = 0;
  let answered = 0;
  let outstanding = 0;
  const headers = credentials.map((c) => ({ authorization: `Bearer ${c}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(BEAT)) }));
  const send = (i: number, scheduled: number) => {
    outstanding++;
    const measured = i >= warmup;
    const done = (ok: boolean) => {
      outstanding--;
      if (!measured) return;
      if (ok) {
        answered++;
        latencies.push(performance.now() - scheduled);
      } else errors++;
    };
    const req = request(`${url}/v1/agent/heartbeat`, { method: 'POST', agent, headers: headers[i % nodes] }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode === 200));
    });
    req.on('error', () => done(false));
    req.end(BEAT);
  };
  let meter: (() => Record<string, number>) | null = null;
  let meterStart = 0;
  const start = performance.now() + 20;
  await new Promise<void>((resolve) => {
    let next = 0;
    const tick = () => {
      const now = performance.now();
      while (next < total && start + (next * 1000) / rate <= now) {
        const scheduled = start + (next * 1000) / rate;
        if (next === warmup) meterStart = performance.now();
        if (next === warmup) meter = cpuSecondsMeter({ server: () => cpuSeconds(serverPid), load_generator: selfCpuSeconds, postgres: postgresCpuSource() });
        if (next >= warmup) lags.push(now - scheduled);
        send(next++, scheduled);
      }
      if (next < total) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  const windowEnd = start + (total * 1000) / rate;
  // Answers still on their way count when they come: wait for them (bounded), so a slow tail shows as latency.
  const deadline = performance.now() + DRAIN_MS;
  while (outstanding > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  const cpuS = meter ? (meter as () => Record<string, number>)() : {};
  const meterWallS = (performance.now() - meterStart) / 1000;
  const cpu = Object.fromEntries(Object.entries(cpuS).map(([k, v]) => [k, round(v / meterWallS, 2)]));
  errors += outstanding;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  lags.sort((a, b) => a - b);
  const measuredCount = total - warmup;
  const elapsedS = Math.max(SECONDS, (Math.max(performance.now(), windowEnd) - (start + (warmup * 1000) / rate)) / 1000);
  const p99 = percentile(latencies, 99);
  return {
    offered_per_s: rate,
    nodes,
    // Answered beats over the time from the first measured send to the last answer (at least the window).
    achieved_per_s: round(answered / elapsedS),
    answered,
    errors,
    p50_ms: round(percentile(latencies, 50), 2),
    p99_ms: round(p99, 2),
    max_ms: round(latencies.at(-1) ?? Number.NaN, 1),
    send_lag_p99_ms: round(percentile(lags, 99), 2),
    cpu_cores: cpu,
    cpu_ms_per_beat: Object.fromEntries(Object.entries(cpuS).map(([k, v]) => [k, answered > 0 ? round((v * 1000) / answered, 3) : Number.NaN])),
    held: answered >= 0.99 * measuredCount && p99 < P99_GOAL_MS,
  };
}

async function main(): Promise<void> {
  const db = await createScratchDatabase(adminUrl, 'ito_bench_heartbeats');
  let api: Awaited<ReturnType<typeof startChildServer>> | null = null;
  let bare: Awaited<ReturnType<typeof startBare>> | null = null;
  try {
    await migrateDatabase(db.url);
    const nodeCount = Math.round(Math.max(...RATES) * INTERVAL_S);
    say(`registering ${nodeCount} nodes…`);
    const credentials = await seedNodes(db.url, nodeCount);
    api = await startChildServer({ databaseUrl: db.url, roles: ['api'], env: { ITO_HEARTBEAT_INTERVAL_S: String(INTERVAL_S) } });
    bare = await startBare();
    const load0 = loadAverage1m();
    const steps: Array<{ heartbeat: Step | null; bare: Step | null; ratio: number | null }> = [];
    const saturated = { heartbeat: false, bare: false };
    const step = async (which: 'heartbeat' | 'bare', url: string, pid: number, rate: number): Promise<Step | null> => {
      if (saturated[which]) return null;
      say(`${rate}/s: ${which} route…`);
      const s = await runStep(url, credentials, rate, pid);
      say(`  achieved ${s.achieved_per_s}/s p50 ${s.p50_ms} ms p99 ${s.p99_ms} ms errors ${s.errors} cores ${JSON.stringify(s.cpu_cores)} cpu ms/beat ${JSON.stringify(s.cpu_ms_per_beat)}`);
      if (s.achieved_per_s < SATURATED * rate) saturated[which] = true;
      await settle(url);
      return s;
    };
    // A fresh server opens its pool's connections, prepares its statements and warms its JIT on the first beats:
    // without this, the first step measured that, and the saturation rule then stopped the route at it.
    say(`warming both servers up at ${RATES[0]}/s (not measured)…`);
    await runStep(api.url, credentials, RATES[0]!, api.pid);
    await settle(api.url);
    await runStep(bare.url, credentials, RATES[0]!, bare.pid);
    await settle(bare.url);
    for (const rate of RATES) {
      if (saturated.heartbeat && saturated.bare) break;
      const heartbeat = await step('heartbeat', api.url, api.pid, rate);
      const b = await step('bare', bare.url, bare.pid, rate);
      steps.push({ heartbeat, bare: b, ratio: heartbeat && b ? round(heartbeat.achieved_per_s / b.achieved_per_s, 3) : null });
    }
    // The goals of issue 30, measured against the bare route of this same run.
    const best = (pick: (s: (typeof steps)[number]) => Step | null) => Math.max(0, ...steps.map(pick).map((s) => s?.achieved_per_s ?? 0));
    const bestHeartbeat = best((s) => s.heartbeat);
    const bestBare = best((s) => s.bare);
    const halfRate = Math.max(1, Math.round(bestBare / 2));
    await settle(api.url);
    say(`${halfRate}/s (half the bare route's maximum): heartbeat route…`);
    const half = await runStep(api.url, credentials, halfRate, api.pid);
    say(`  achieved ${half.achieved_per_s}/s p50 ${half.p50_ms} ms p99 ${half.p99_ms} ms errors ${half.errors} cpu ms/beat ${JSON.stringify(half.cpu_ms_per_beat)}`);
    const cpuPerBeat = round((half.cpu_ms_per_beat.server ?? Number.NaN) + (half.cpu_ms_per_beat.postgres ?? Number.NaN), 3);
    const ratioToBare = bestBare > 0 ? round(bestHeartbeat / bestBare, 3) : Number.NaN;
    const named = (value: number, goal: string, met: boolean) => ({ value, goal, met: Number.isFinite(value) && met });
    const goals = {
      heartbeat_cpu_ms_per_beat: named(cpuPerBeat, '<= 0.15 (API + PostgreSQL CPU ms per answered beat)', cpuPerBeat <= 0.15),
      heartbeat_ratio_to_bare: named(ratioToBare, '>= 0.8 (maximum answered/s, heartbeat ÷ bare route, same run)', ratioToBare >= 0.8),
      heartbeat_p99_ms_at_half: named(half.p99_ms, `< ${P99_GOAL_MS} (p99 at half the bare route's maximum, ≥ 99 % answered)`, half.held),
    };
    const maxHeld = (pick: (s: (typeof steps)[number]) => Step | null) => Math.max(0, ...steps.map(pick).filter((s): s is Step => s?.held === true).map((s) => s.offered_per_s));
    const heldHeartbeat = maxHeld((s) => s.heartbeat);
    const heldBare = maxHeld((s) => s.bare);
    const result = {
      ...goals,
      goal_basis: { max_answered_per_s: { heartbeat: bestHeartbeat, bare: bestBare }, half_rate_step: half },
      server: 'ito-server start --role api (child process)',
      interval_s: INTERVAL_S,
      seconds_per_rate: SECONDS,
      warmup_seconds: WARMUP_SECONDS,
      load_average_1m: { before: load0, after: loadAverage1m() },
      steps,
      max_held_per_s: { heartbeat: heldHeartbeat, bare: heldBare, ratio: heldBare > 0 ? round(heldHeartbeat / heldBare, 3) : null },
      nodes_per_api_process_at_interval: heldHeartbeat * INTERVAL_S,
      goal: { rate_per_s: GOAL_RATE, p99_ms: P99_GOAL_MS, met: heldHeartbeat >= GOAL_RATE },
    };
    process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await bare?.stop();
    await api?.stop();
    await db.drop();
  }
}

await main();
