/**
 * The open-loop load of bench:heartbeats: the fleet it registers, the requests its agents send (one beat per
 * request on the single route, or one request per agent host carrying the beats of its `hostSize` nodes on the
 * batched route), and one measured step at an offered rate of beats per second.
 */
import { Agent, request } from 'node:http';
import pg from 'pg';
import { createAdminService, createApiLedger, hashSecret, newId, newSecret } from '@ito/runs';
import { h200Booking } from '../fixtures/bookings.js';
import { cpuSeconds, cpuSecondsMeter, postgresCpuSource, selfCpuSeconds } from './proc-cpu.js';

/** What an idle agent says: no task, eight healthy GPUs. */
const GPUS = Array.from({ length: 8 }, (_, index) => ({ index, healthy: true, temperature_c: 61, utilization: 0.97, memory_used_gb: 70.5, ecc_errors: 0 }));
export const P99_GOAL_MS = 50;
/** How long answers still outstanding after the last send are waited for; later ones count as errors. */
const DRAIN_MS = 10_000;
/** A booking holds at most 4,096 nodes: the fleet is spread over bookings of this many. */
const NODES_PER_BOOKING = 1_000;

const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
export const round = (n: number, d = 1) => Number(n.toFixed(d));

/** Registers `count` nodes: one through the operator's service (its event), the rest as rows beside it. */
export async function seedNodes(databaseUrl: string, count: number): Promise<Array<{ credential: string; nodeId: string }>> {
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
    const nodes = [{ credential: first.node_credential, nodeId: first.node_id }];
    for (let i = 1; i < count; i++) nodes.push({ credential: newSecret('nc'), nodeId: newId('node') });
    const rest = nodes.slice(1);
    // Setup, not measured: the node rows the API authenticates against, without an event each.
    await pool.query(
      `insert into nodes (node_id, tenant_id, booking_id, name, credential_hash)
       select id, $2, b, 'node-' || ord, h from unnest($1::text[], $3::text[], $4::text[]) with ordinality as x(id, b, h, ord)`,
      [rest.map((n) => n.nodeId), tenant.tenant_id, rest.map((_, i) => bookings[Math.floor((i + 1) / NODES_PER_BOOKING)]!), rest.map((n) => hashSecret(n.credential))],
    );
    // Statistics for the new rows now, not when autovacuum gets to them: the credential lookup is planned once per
    // connection, and a plan made for a one-row table scans 25,000 rows a beat.
    await pool.query('analyze nodes');
    return nodes;
  } finally {
    await pool.end();
  }
}

/**
 * The requests of a fleet of `nodes` nodes: with `hostSize` 1 one single heartbeat per node; above, one batch per
 * host of `hostSize` consecutive nodes, carried by its first node's credential. `skip` leaves nodes out of the
 * load (the detection check's silent ones). Bodies are made once: the generator only sends bytes.
 */
export interface Fleet {
  path: string;
  hostSize: number;
  requests: Array<{ headers: Record<string, string>; body: string; beats: number }>;
}

export function fleetOf(credentials: readonly string[], nodes: number, hostSize: number, skip: ReadonlySet<string> = new Set()): Fleet {
  const requests: Fleet['requests'] = [];
  const headers = (carrier: string, body: string) => ({ authorization: `Bearer ${carrier}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
  for (let first = 0; first < nodes; first += hostSize) {
    const host = credentials.slice(first, Math.min(nodes, first + hostSize)).filter((c) => !skip.has(c));
    if (host.length === 0) continue;
    const body = hostSize === 1 ? JSON.stringify({ tasks: [], gpus: GPUS }) : JSON.stringify({ beats: host.map((credential) => ({ credential, tasks: [], gpus: GPUS })) });
    requests.push({ headers: headers(host[0]!, body), body, beats: host.length });
  }
  return { path: hostSize === 1 ? '/v1/agent/heartbeat' : '/v1/agent/heartbeats', hostSize, requests };
}

export interface Step {
  offered_per_s: number;
  nodes: number;
  /** Requests the step sent per second (beats ÷ host size). */
  requests_per_s: number;
  achieved_per_s: number;
  answered: number;
  /** Beats not answered, of which `shed` were in requests refused 429 (admission shedding, Retry-After). */
  errors: number;
  shed: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  send_lag_p99_ms: number;
  cpu_cores: Record<string, number>;
  /** CPU milliseconds per answered beat, by process: what a beat costs, whatever share of the cores it got. */
  cpu_ms_per_beat: Record<string, number>;
  held: boolean;
}

export interface StepTiming {
  seconds: number;
  warmupSeconds: number;
}

/**
 * Open loop: request i goes out at start + i × hostSize / rate, sent from a 1 ms tick that sends every request whose
 * time has come (so answers are read between ticks even when the generator falls behind), host i mod hosts. A
 * beat is answered when its request was answered 200 and its own answer is not a refusal; its latency is its
 * request's, from the scheduled time.
 */
export async function runStep(url: string, fleet: Fleet, rate: number, serverPid: number, timing: StepTiming): Promise<Step> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1024 });
  const requestRate = rate / fleet.hostSize;
  const total = Math.round(requestRate * (timing.warmupSeconds + timing.seconds));
  const warmup = Math.round(requestRate * timing.warmupSeconds);
  const latencies: number[] = [];
  const lags: number[] = [];
  let errors = 0;
  let answered = 0;
  let outstanding = 0;
  let offeredBeats = 0;
  let shed = 0;
  const send = (i: number, scheduled: number) => {
    const r = fleet.requests[i % fleet.requests.length]!;
    outstanding++;
    const measured = i >= warmup;
    if (measured) offeredBeats += r.beats;
    const done = (status: number, refused: number) => {
      const ok = status === 200;
      outstanding--;
      if (!measured) return;
      if (status === 429) shed += r.beats;
      if (!ok) return void (errors += r.beats);
      answered += r.beats - refused;
      errors += refused;
      const latency = performance.now() - scheduled;
      for (let b = 0; b < r.beats - refused; b++) latencies.push(latency);
    };
    const req = request(`${url}${fleet.path}`, { method: 'POST', agent, headers: r.headers }, (res) => {
      if (fleet.hostSize === 1) {
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0, 0));
        return;
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => done(res.statusCode ?? 0, res.statusCode === 200 ? text.split('"ok":false').length - 1 : 0));
    });
    req.on('error', () => done(0, 0));
    req.end(r.body);
  };
  let meter: (() => Record<string, number>) | null = null;
  let meterStart = 0;
  const start = performance.now() + 20;
  await new Promise<void>((resolve) => {
    let next = 0;
    const tick = () => {
      const now = performance.now();
      while (next < total && start + (next * 1000) / requestRate <= now) {
        const scheduled = start + (next * 1000) / requestRate;
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
  const windowEnd = start + (total * 1000) / requestRate;
  // Answers still on their way count when they come: wait for them (bounded), so a slow tail shows as latency.
  const deadline = performance.now() + DRAIN_MS;
  while (outstanding > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  const cpuS = meter ? (meter as () => Record<string, number>)() : {};
  const meterWallS = (performance.now() - meterStart) / 1000;
  const cpu = Object.fromEntries(Object.entries(cpuS).map(([k, v]) => [k, round(v / meterWallS, 2)]));
  errors = Math.max(errors, offeredBeats - answered);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  lags.sort((a, b) => a - b);
  const elapsedS = Math.max(timing.seconds, (Math.max(performance.now(), windowEnd) - (start + (warmup * 1000) / requestRate)) / 1000);
  const p99 = percentile(latencies, 99);
  return {
    offered_per_s: rate,
    nodes: fleet.requests.reduce((n, r) => n + r.beats, 0),
    requests_per_s: round(requestRate),
    // Answered beats over the time from the first measured send to the last answer (at least the window).
    achieved_per_s: round(answered / elapsedS),
    answered,
    errors,
    shed,
    p50_ms: round(percentile(latencies, 50), 2),
    p99_ms: round(p99, 2),
    max_ms: round(latencies.at(-1) ?? Number.NaN, 1),
    send_lag_p99_ms: round(percentile(lags, 99), 2),
    cpu_cores: cpu,
    cpu_ms_per_beat: Object.fromEntries(Object.entries(cpuS).map(([k, v]) => [k, answered > 0 ? round((v * 1000) / answered, 3) : Number.NaN])),
    held: answered >= 0.99 * offeredBeats && p99 < P99_GOAL_MS,
  };
}
