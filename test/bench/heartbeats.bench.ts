/**
 * `npm run bench:heartbeats -- --json [--host-size 16] [--rates …] [--seconds 10] [--warmup-seconds 2]
 *   [--interval-s 2] [--misses 3] [--small]`
 *
 * Simulated agents heartbeat `ito-server start --role api` (a child process on a scratch database with
 * rates × interval registered nodes) over HTTP keep-alive on loopback, open loop: at each offered rate (beats per
 * second) the requests go out on a fixed schedule whatever the server does, and latency is measured from the
 * scheduled send time. Each beat is what an idle agent sends: no task, eight healthy GPUs.
 *
 * `--host-size H` (default 16): the nodes are grouped into agent hosts of H consecutive nodes, and each host sends
 * one `POST /v1/agent/heartbeats` per interval carrying its H beats, each with its node's credential (at a rate of
 * R beats/s that is R / H requests/s). `--host-size 1` sends one `POST /v1/agent/heartbeat` per beat, the single
 * route. Beside each rate, in the same run, the same requests on the same schedule against a bare Fastify route
 * with no database (bare-server.ts, its own child process; it parses the same bodies and answers each beat): the
 * ceiling of HTTP + JSON for the same bytes on this machine now.
 *
 * Reported per rate and per server: achieved beats/s, p50/p99/max latency from the scheduled time, errors, and
 * the cores used by the server, the load generator (this process) and PostgreSQL. A rate is held when at least
 * 99 % of the offered beats were answered (200, and not refused within the batch), and p99 < 50 ms. A server that
 * answers less than 80 % of a rate is not offered the higher ones (its backlog would only grow).
 * `--small`: rates 2000,4000,8000 (500,1000,2000 with --host-size 1) for 4 s each (under two minutes in all).
 *
 * After the ramp, one more heartbeat step at half the bare route's maximum rate (answered beats/s, the best of
 * its steps). `--json` then names the goals of issue 30, each `{ value, goal, met }`:
 * `heartbeat_cpu_ms_per_beat` (API + PostgreSQL CPU per answered beat in that step; ≤ 0.15),
 * `heartbeat_ratio_to_bare` (the heartbeat route's maximum answered beats/s ÷ the bare route's, both sent the same
 * requests, same run; ≥ 0.8) and `heartbeat_p99_ms_at_half` (p99 of that step; < 50). Then the detection check
 * (heartbeat-detection.ts) at the heartbeat route's maximum held rate (its best answered rate if it held none):
 * `heartbeat_detection_s`, the longest time from a silent node's last beat until the liveness table shows it
 * silent past interval × misses, with no beating node seen so (bound interval × misses + interval).
 */
import { benchArgs } from './args.js';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { migrateDatabase } from '@ito/ledger';
import { createScratchDatabase } from '../support/scratch-db.js';
import { startChildServer } from './child-server.js';
import { detectionCheck } from './heartbeat-detection.js';
import { P99_GOAL_MS, fleetOf, round, runStep, seedNodes, type Step, type StepTiming } from './heartbeat-load.js';
import { loadAverage1m } from './proc-cpu.js';

const { json, small: SMALL, opt } = benchArgs();
const HOST_SIZE = Number(opt('--host-size', '16'));
const BATCHED = HOST_SIZE > 1;
const DEFAULT_RATES = BATCHED ? (SMALL ? '2000,4000,8000' : '2000,4000,8000,12500,25000,50000') : SMALL ? '500,1000,2000' : '500,1000,2000,4000,8000,12500';
const RATES = opt('--rates', DEFAULT_RATES).split(',').map(Number);
const TIMING: StepTiming = { seconds: Number(opt('--seconds', SMALL ? '4' : '10')), warmupSeconds: Number(opt('--warmup-seconds', SMALL ? '1' : '2')) };
const INTERVAL_S = Number(opt('--interval-s', '2'));
const MISSES = Number(opt('--misses', '3'));
/** A server that answers less than this share of the offered rate is saturated: higher rates are not offered to it. */
const SATURATED = 0.8;
const GOAL_RATE = 12_500;
const adminUrl = process.env.ITO_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Progress goes to stderr, so `--json` keeps stdout to the one result line. */
const say = (line: string) => process.stderr.write(`${line}\n`);
if (RATES.some((r) => !(r > 0)) || !(TIMING.seconds > 0) || !(TIMING.warmupSeconds >= 0)) throw new Error('--rates, --seconds and --warmup-seconds must be positive numbers');
if (!Number.isInteger(HOST_SIZE) || HOST_SIZE < 1 || HOST_SIZE > 64) throw new Error('--host-size must be an integer from 1 to 64 (a batch carries at most 64 beats)');

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

/** The nodes a step at `rate` beats/s uses: one beat each per interval, whole hosts. */
const nodesAt = (rate: number, available: number) => Math.min(available, Math.max(HOST_SIZE, Math.round((rate * INTERVAL_S) / HOST_SIZE) * HOST_SIZE));

async function main(): Promise<void> {
  const db = await createScratchDatabase(adminUrl, 'ito_bench_heartbeats');
  let api: Awaited<ReturnType<typeof startChildServer>> | null = null;
  let bare: Awaited<ReturnType<typeof startBare>> | null = null;
  try {
    await migrateDatabase(db.url);
    const nodeCount = nodesAt(Math.max(...RATES), Number.POSITIVE_INFINITY);
    say(`registering ${nodeCount} nodes (${BATCHED ? `agent hosts of ${HOST_SIZE}, one batched request per host per interval` : 'one request per beat'})…`);
    const fleet = await seedNodes(db.url, nodeCount);
    const credentials = fleet.map((n) => n.credential);
    const stepAt = (url: string, pid: number, rate: number, timing = TIMING) => runStep(url, fleetOf(credentials, nodesAt(rate, credentials.length), HOST_SIZE), rate, pid, timing);
    api = await startChildServer({ databaseUrl: db.url, roles: ['api'], env: { ITO_HEARTBEAT_INTERVAL_S: String(INTERVAL_S), ITO_HEARTBEAT_MISSES: String(MISSES) } });
    bare = await startBare();
    const load0 = loadAverage1m();
    const steps: Array<{ heartbeat: Step | null; bare: Step | null; ratio: number | null }> = [];
    const saturated = { heartbeat: false, bare: false };
    const report = (s: Step) =>
      `  achieved ${s.achieved_per_s} beats/s (${s.requests_per_s} requests/s offered) p50 ${s.p50_ms} ms p99 ${s.p99_ms} ms errors ${s.errors} (shed ${s.shed}) cores ${JSON.stringify(s.cpu_cores)} cpu ms/beat ${JSON.stringify(s.cpu_ms_per_beat)}`;
    const step = async (which: 'heartbeat' | 'bare', url: string, pid: number, rate: number): Promise<Step | null> => {
      if (saturated[which]) return null;
      say(`${rate} beats/s: ${which} route…`);
      const s = await stepAt(url, pid, rate);
      say(report(s));
      if (s.achieved_per_s < SATURATED * rate) saturated[which] = true;
      await settle(url);
      return s;
    };
    // A fresh server opens its pool's connections, prepares its statements, fills its credential cache and warms
    // its JIT on the first beats: without this, the first step measured that, and the saturation rule then stopped
    // the route at it. The warm-up runs at the top rate's fleet so every node's credential is cached.
    say(`warming both servers up (not measured)…`);
    await runStep(api.url, fleetOf(credentials, credentials.length, HOST_SIZE), RATES[0]!, api.pid, { seconds: Math.max(1, (credentials.length / RATES[0]!) * 1.1), warmupSeconds: 0 });
    await settle(api.url);
    await stepAt(bare.url, bare.pid, RATES[0]!);
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
    say(`${halfRate} beats/s (half the bare route's maximum): heartbeat route…`);
    const half = await stepAt(api.url, api.pid, halfRate);
    say(report(half));
    const maxHeld = (pick: (s: (typeof steps)[number]) => Step | null) => Math.max(0, ...steps.map(pick).filter((s): s is Step => s?.held === true).map((s) => s.offered_per_s));
    const heldHeartbeat = maxHeld((s) => s.heartbeat);
    const heldBare = maxHeld((s) => s.bare);
    const detectionRate = heldHeartbeat > 0 ? heldHeartbeat : Math.max(1, Math.round(bestHeartbeat));
    await settle(api.url);
    say(`detection check at ${detectionRate} beats/s (${heldHeartbeat > 0 ? 'the maximum held rate' : 'no rate held: the best answered rate'}): 8 nodes fall silent…`);
    const detection = await detectionCheck(db.url, api.url, api.pid, { credentials, nodeIds: fleet.map((n) => n.nodeId), rate: detectionRate, hostSize: HOST_SIZE, intervalS: INTERVAL_S, misses: MISSES });
    say(`  silent nodes seen lost after ${JSON.stringify(detection.detected_after_s)} s (bound ${detection.bound_s} s), undetected ${detection.undetected}, beating nodes seen lost ${detection.beating_seen_lost}`);

    const cpuPerBeat = round((half.cpu_ms_per_beat.server ?? Number.NaN) + (half.cpu_ms_per_beat.postgres ?? Number.NaN), 3);
    const ratioToBare = bestBare > 0 ? round(bestHeartbeat / bestBare, 3) : Number.NaN;
    const named = (value: number, goal: string, met: boolean) => ({ value, goal, met: Number.isFinite(value) && met });
    const basis = BATCHED ? `hosts of ${HOST_SIZE} nodes, one batched request each, both routes sent the same requests` : 'one request per beat';
    const goals = {
      heartbeat_cpu_ms_per_beat: named(cpuPerBeat, `<= 0.15 (API + PostgreSQL CPU ms per answered beat; ${basis})`, cpuPerBeat <= 0.15),
      heartbeat_ratio_to_bare: named(ratioToBare, `>= 0.8 (maximum answered beats/s, heartbeat ÷ bare route, same run; ${basis})`, ratioToBare >= 0.8),
      heartbeat_p99_ms_at_half: named(half.p99_ms, `< ${P99_GOAL_MS} (p99 at half the bare route's maximum, ≥ 99 % answered)`, half.held),
      heartbeat_detection_s: named(
        detection.detected_after_s.max,
        `<= ${detection.bound_s} (interval × misses + interval: every silent node seen lost, no beating node, at ${detectionRate} beats/s)`,
        detection.undetected === 0 && detection.beating_seen_lost === 0 && detection.detected_after_s.max <= detection.bound_s,
      ),
    };
    const result = {
      ...goals,
      goal_basis: { max_answered_per_s: { heartbeat: bestHeartbeat, bare: bestBare }, half_rate_step: half, detection },
      server: 'ito-server start --role api (child process)',
      host_size: HOST_SIZE,
      route: BATCHED ? 'POST /v1/agent/heartbeats' : 'POST /v1/agent/heartbeat',
      interval_s: INTERVAL_S,
      misses: MISSES,
      seconds_per_rate: TIMING.seconds,
      warmup_seconds: TIMING.warmupSeconds,
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
