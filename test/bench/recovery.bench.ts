/**
 * `npm run bench:recovery -- --json [--failures 20] [--kinds crash,silent,hang] [--time-scale 20000] [--hang-factor 5] [--parallel-kinds] [--small]`
 *
 * `ito-server start` (every role: API, workers, SLO monitor) runs in a child process on a scratch database at the
 * default heartbeat (ITO_HEARTBEAT_INTERVAL_S=2, 3 misses, ITO_HANG_STEP_FACTOR=5); this process is the fleet. For
 * each kind of failure, `--failures` runs at once (default 20), each on its own booking of two planned nodes and a
 * spare, every node an in-process `Agent` with the simulated executor, talking HTTP to the server:
 *  - crash: the trainer on gpu-02 exits at a pretrain step after the first checkpoint (`crash@step=…`), which the
 *    agent reports at once;
 *  - silent: once the run has saved a pretrain checkpoint, the rank-1 node's network goes (its agent talks through
 *    a loopback TCP proxy that the bench pauses: requests hang, heartbeats stop arriving);
 *  - hang: the trainer on gpu-01 (rank 0) stops making progress (`hang@step=…`) while its agent keeps beating.
 * Read back from the ledger the server wrote, per incident: the failure's event (TaskFailed crash, NodeLost,
 * TaskHung), the RunResumed that follows (its detection_latency_s = detected − last good evidence, and
 * resume_latency_s = RunResumed − detected), and the CheckpointRestored the resumed attempt reports (its
 * restore_seconds, beside the resume latency, not in it). For silent nodes also the loss measured from the moment
 * the bench cut the link. Reported p50/p99 per kind, against the goals at the 2 s interval: crash detected
 * p99 ≤ 2 s; silent p99 ≤ 3 × interval + 2 s; hang p99 ≤ k × expected step time + interval; resume p99 ≤ 30 s.
 * `--small`: 1 failure of each kind, all kinds at once, hang factor 1 (a quick check, under a minute).
 * `--hang-factor k` sets ITO_HANG_STEP_FACTOR; `--parallel-kinds` runs the kinds at once.
 */
import { benchArgs } from './args.js';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import pg from 'pg';
import { Agent, SimulatedExecutor, parseSimFaults } from '@ito/agent';
import { createAdminService, createApiLedger } from '@ito/runs';
import { AgentApi, ItoClient } from '@ito/client';
import { createLogger } from '@ito/config';
import { manifestDigest } from '@ito/contracts';
import { migrateDatabase } from '@ito/ledger';
import { startPausableProxy } from '../chaos/support/pausable-proxy.js';
import { h200Booking } from '../fixtures/bookings.js';
import { createScratchDatabase } from '../support/scratch-db.js';
import { startChildServer, type ChildServer } from './child-server.js';
import { cpuMeter, cpuSeconds, loadAverage1m, postgresCpuSource, selfCpuSeconds } from './proc-cpu.js';

const { args, json, small: SMALL, opt } = benchArgs();
const FAILURES = Number(opt('--failures', SMALL ? '1' : '20'));
const KINDS = opt('--kinds', 'crash,silent,hang').split(',') as Kind[];
/**
 * The simulated clock, per kind: 20,000× for crash and hang (the fault fires at a step), 2,000× for silent, whose
 * link the bench cuts when it sees a pretrain checkpoint: at 20,000× most of pretrain was over by then and the cut
 * landed after rank 1's task had ended (15 of 20 runs in one run). `--time-scale` sets all three.
 */
const TIME_SCALE: Record<Kind, number> = args.includes('--time-scale')
  ? { crash: Number(opt('--time-scale', '')), silent: Number(opt('--time-scale', '')), hang: Number(opt('--time-scale', '')) }
  : { crash: 20_000, silent: 2_000, hang: 20_000 };
/** The pretrain step at which crash and hang faults fire: past the first checkpoint at the default time scale. */
const FAULT_STEP = Number(opt('--fault-step', '600'));
const INTERVAL_S = 2;
const MISSES = 3;
/** The server's default k; `--small` uses 1 so that a hang judged on the plan's step time fits a quick check. */
const HANG_K = Number(opt('--hang-factor', SMALL ? '1' : '5'));
/** All kinds at once (the quick check) instead of one kind after another. */
const PARALLEL_KINDS = SMALL || args.includes('--parallel-kinds');
const WAIT_MS = Number(opt('--wait-s', '180')) * 1000;
const adminUrl = process.env.ITO_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.ITO_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Progress goes to stderr, so `--json` keeps stdout to the one result line. */
const say = (line: string) => process.stderr.write(`${line}\n`);
type Kind = 'crash' | 'silent' | 'hang';
if (!(FAILURES >= 1) || KINDS.some((k) => !['crash', 'silent', 'hang'].includes(k))) throw new Error('--failures must be ≥ 1 and --kinds a list of crash, silent, hang');

const manifest = readFileSync(new URL('../../examples/manifest.json', import.meta.url), 'utf8');
const digest = manifestDigest(manifest);
const quiet = createLogger({ level: 'error', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
const percentile = (values: number[], p: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? null : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const round = (n: number | null, d = 2) => (n === null ? null : Number(n.toFixed(d)));
const stats = (values: number[]) => ({ n: values.length, p50: round(percentile(values, 50)), p99: round(percentile(values, 99)), max: round(percentile(values, 100)) });

interface Row {
  position: number;
  type: string;
  data: any;
  at: Date;
}

interface Incident {
  run_id: string;
  failure: string | null;
  classified_as_expected: boolean;
  detection_s: number | null;
  detection_from_cut_s: number | null;
  resume_s: number | null;
  resume_from_event_s: number | null;
  restore_s: number | null;
  hang_goal_s: number | null;
  failed_rank: number | null;
  from_checkpoint: boolean;
  hang_expected_step_s: number | null;
  ended_as: string | null;
}

const EXPECTED: Record<Kind, (r: Row) => boolean> = {
  crash: (r) => r.type === 'TaskFailed' && r.data.failure === 'crash',
  silent: (r) => r.type === 'NodeLost',
  hang: (r) => r.type === 'TaskHung',
};
const IS_FAILURE = (r: Row) => r.type === 'NodeLost' || r.type === 'TaskHung' || (r.type === 'TaskFailed' && ['crash', 'gpu_fault', 'error'].includes(r.data.failure));

/** The events the bench reads, of every run at once (progress and the rest left out: they grow with the run). */
const READ_TYPES = ['StageStarted', 'CheckpointSaved', 'CheckpointRestored', 'NodeLost', 'TaskHung', 'TaskFailed', 'RunResumed', 'RunSucceeded', 'RunFailed', 'RunCancelled'];

async function eventsOf(pool: pg.Pool, runIds: string[]): Promise<Map<string, Row[]>> {
  const { rows } = await pool.query<{ stream_id: string; position: string; type: string; data: any; at: Date }>(
    'select stream_id, position::text as position, type, data, recorded_at as at from events where stream_id = any($1) and type = any($2) order by stream_id, stream_version',
    [runIds.map((id) => `run-${id}`), READ_TYPES],
  );
  const out = new Map<string, Row[]>(runIds.map((id) => [id, []]));
  for (const r of rows) out.get(r.stream_id.slice('run-'.length))!.push({ position: Number(r.position), type: r.type, data: r.data, at: r.at });
  return out;
}

/** What the ledger says of one run's first incident, and whether the run has resumed from it yet. */
function incidentOf(kind: Kind, runId: string, events: Row[], cutAt: number | null): { incident: Incident; resumed: boolean } {
  const failure = events.find(IS_FAILURE) ?? null;
  const resumed = failure ? (events.find((e) => e.type === 'RunResumed' && e.position > failure.position) ?? null) : null;
  const restored = resumed ? (events.find((e) => e.type === 'CheckpointRestored' && e.position > resumed.position) ?? null) : null;
  const started = events.filter((e) => e.type === 'StageStarted' && e.data.stage === 'pretrain' && (!failure || e.position < failure.position)).at(-1);
  const failedNode = failure?.data.node_id ?? null;
  const rank = started?.data.tasks?.find((t: any) => t.node_id === failedNode)?.rank ?? null;
  const hangGoal = failure?.type === 'TaskHung' ? Number(failure.data.k ?? HANG_K) * Number(failure.data.expected_step_s ?? 0) + INTERVAL_S : null;
  return {
    // The restore is reported by the resumed attempt a moment later; a run that reports none is done 3 s on.
    resumed: resumed !== null && (restored !== null || Date.now() - resumed.at.getTime() > 3_000),
    incident: {
      run_id: runId,
      failure: failure ? (failure.type === 'TaskFailed' ? `TaskFailed(${failure.data.failure})` : failure.type) : null,
      classified_as_expected: failure !== null && EXPECTED[kind](failure),
      detection_s: resumed?.data.detection_latency_s ?? null,
      detection_from_cut_s: cutAt !== null && failure ? (failure.at.getTime() - cutAt) / 1000 : null,
      resume_s: resumed?.data.resume_latency_s ?? null,
      resume_from_event_s: failure && resumed ? (resumed.at.getTime() - failure.at.getTime()) / 1000 : null,
      restore_s: restored?.data.restore_seconds ?? null,
      hang_goal_s: hangGoal,
      failed_rank: rank,
      from_checkpoint: typeof resumed?.data.from_checkpoint_id === 'string',
      hang_expected_step_s: failure?.type === 'TaskHung' ? Number(failure.data.expected_step_s) : null,
      ended_as: events.find((e) => ['RunSucceeded', 'RunFailed', 'RunCancelled'].includes(e.type))?.type ?? null,
    },
  };
}

async function submit(url: string, tenant: { requester_key: string; approver_key: string }, bookingId: string, key: string): Promise<string> {
  const call = async (method: string, path: string, auth: string, body?: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${auth}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return (await r.json()) as any;
  };
  const c = await call('POST', '/v1/confirmations', tenant.requester_key, { action: 'train.create', booking_id: bookingId, manifest, manifest_digest: digest });
  await call('POST', `/v1/confirmations/${c.data.confirmation_ref}/approve`, tenant.approver_key);
  const r = await call('POST', '/v1/runs', tenant.requester_key, { booking_id: bookingId, manifest, manifest_digest: digest, confirmation_ref: c.data.confirmation_ref }, { 'idempotency-key': key });
  if (!r.ok) throw new Error(`train refused: ${JSON.stringify(r.error)}`);
  return r.data.run_id as string;
}

async function runKind(kind: Kind, server: ChildServer, pool: pg.Pool) {
  const admin = createAdminService({ pool, ledger: createApiLedger(pool) });
  const tenant = await admin.createTenant({ name: `recovery-${kind}`, requesterPrincipal: 'ml@bench', approverPrincipal: 'finance@bench' });
  const port = Number(new URL(server.url).port);
  const agents: Agent[] = [];
  const proxies: Array<Awaited<ReturnType<typeof startPausableProxy>>> = [];
  const runs: Array<{ runId: string; links: Map<string, Awaited<ReturnType<typeof startPausableProxy>>>; cutAt: number | null }> = [];
  try {
    for (let i = 0; i < FAILURES; i++) {
      const booking = await admin.createBooking(h200Booking(tenant.tenant_id));
      const links = new Map<string, Awaited<ReturnType<typeof startPausableProxy>>>();
      for (const name of ['gpu-01', 'gpu-02', 'gpu-03']) {
        const node = await admin.registerNode({ bookingId: booking.booking_id, name });
        let baseUrl = server.url;
        if (kind === 'silent') {
          const link = await startPausableProxy(port);
          proxies.push(link);
          links.set(node.node_id, link);
          baseUrl = `http://127.0.0.1:${link.port}`;
        }
        const fault = kind === 'crash' && name === 'gpu-02' ? `crash@step=${FAULT_STEP},stage=pretrain` : kind === 'hang' && name === 'gpu-01' ? `hang@step=${FAULT_STEP},stage=pretrain` : '';
        const agent = new Agent({
          api: new AgentApi(new ItoClient({ baseUrl, credential: node.node_credential, timeoutMs: 30_000, backoff: { baseMs: 100, maxMs: 1_000 } })),
          executor: new SimulatedExecutor({ timeScale: TIME_SCALE[kind], progressIntervalMs: 1000, faults: parseSimFaults(fault) }),
          logger: quiet,
          version: 'bench',
          gpus: () => Array.from({ length: 8 }, (_, index) => ({ index, healthy: true })),
          progressIntervalMs: 1000,
          retryMs: 500,
          stopGraceMs: 1_000,
        });
        await agent.start();
        agents.push(agent);
      }
      runs.push({ runId: await submit(server.url, tenant, booking.booking_id, `recovery-${kind}-${i}`), links, cutAt: null });
    }
    say(`${kind}: ${FAILURES} runs submitted; waiting for the failures and the resumes…`);
    const started = Date.now();
    const deadline = Date.now() + WAIT_MS;
    const done = new Map<string, Incident>();
    const meter = cpuMeter({ server: () => cpuSeconds(server.pid), fleet: selfCpuSeconds, postgres: postgresCpuSource() });
    while (done.size < runs.length && Date.now() < deadline) {
      const all = await eventsOf(pool, runs.filter((r) => !done.has(r.runId)).map((r) => r.runId));
      for (const run of runs) {
        if (done.has(run.runId)) continue;
        const events = all.get(run.runId)!;
        const ended = events.some((e) => ['RunFailed', 'RunSucceeded', 'RunCancelled'].includes(e.type));
        if (kind === 'silent' && run.cutAt === null && !ended) {
          // Cut rank 1's link once pretrain has a checkpoint to resume from.
          const started = events.find((e) => e.type === 'StageStarted' && e.data.stage === 'pretrain');
          if (started && events.some((e) => e.type === 'CheckpointSaved' && e.data.stage === 'pretrain')) {
            const victim = started.data.tasks?.find((t: any) => t.rank === 1)?.node_id;
            const link = victim ? run.links.get(victim) : undefined;
            if (link) {
              link.pause();
              run.cutAt = Date.now();
            }
          }
          continue;
        }
        const { incident, resumed } = incidentOf(kind, run.runId, events, run.cutAt);
        if (resumed || ended) done.set(run.runId, incident);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const cpu = meter();
    // Runs that never got there are reported as such, with what the ledger holds.
    const rest = await eventsOf(pool, runs.filter((r) => !done.has(r.runId)).map((r) => r.runId));
    for (const [runId, events] of rest) done.set(runId, incidentOf(kind, runId, events, runs.find((r) => r.runId === runId)!.cutAt).incident);
    const incidents = [...done.values()];
    const num = (pick: (i: Incident) => number | null) => incidents.map(pick).filter((v): v is number => typeof v === 'number');
    const detection = stats(num((i) => i.detection_s));
    const resume = stats(num((i) => i.resume_s));
    const goalDetection = kind === 'crash' ? 2 : kind === 'silent' ? MISSES * INTERVAL_S + 2 : percentile(num((i) => i.hang_goal_s), 99);
    return {
      kind,
      runs: runs.length,
      ...(kind === 'silent' ? { links_cut: runs.filter((r) => r.cutAt !== null).length } : {}),
      time_scale: TIME_SCALE[kind],
      detected: incidents.filter((i) => i.failure !== null).length,
      ended_without_a_failure_event: incidents.filter((i) => i.failure === null).map((i) => i.ended_as ?? 'still running').reduce<Record<string, number>>((m, e) => ({ ...m, [e]: (m[e] ?? 0) + 1 }), {}),
      classified_as_expected: incidents.filter((i) => i.classified_as_expected).length,
      resumed: incidents.filter((i) => i.resume_s !== null).length,
      resumed_from_a_checkpoint: incidents.filter((i) => i.from_checkpoint).length,
      elapsed_s: round((Date.now() - started) / 1000, 1),
      failures_seen: Object.fromEntries([...new Set(incidents.map((i) => i.failure ?? 'none'))].map((f) => [f, incidents.filter((i) => (i.failure ?? 'none') === f).length])),
      failed_ranks: Object.fromEntries([...new Set(incidents.map((i) => String(i.failed_rank)))].map((r) => [r, incidents.filter((i) => String(i.failed_rank) === r).length])),
      detection_s: detection,
      ...(kind === 'silent' ? { detection_from_cut_s: stats(num((i) => i.detection_from_cut_s)) } : {}),
      resume_s: resume,
      resume_from_failure_event_s: stats(num((i) => i.resume_from_event_s)),
      checkpoint_restore_s: stats(num((i) => i.restore_s)),
      ...(kind === 'hang' ? { hang_expected_step_s: stats(num((i) => i.hang_expected_step_s)) } : {}),
      cpu_cores: cpu,
      goals: {
        detection_p99_s: round(goalDetection),
        detection_met: detection.p99 !== null && goalDetection !== null && detection.p99 <= goalDetection && detection.n === runs.length,
        resume_p99_s: 30,
        resume_met: resume.p99 !== null && resume.p99 <= 30 && resume.n === runs.length,
      },
    };
  } finally {
    for (const p of proxies) await p.close();
    // An agent's stop waits for its held assignments poll; a few seconds is enough for the next kind to start clean.
    const stopped = Promise.all(agents.map((a) => a.stop()));
    await Promise.race([stopped, new Promise((r) => setTimeout(r, 3_000))]);
  }
}

async function main(): Promise<void> {
  const db = await createScratchDatabase(adminUrl, 'ito_bench_recovery');
  const pool = new pg.Pool({ connectionString: db.url, max: 4 });
  let server: ChildServer | null = null;
  try {
    await migrateDatabase(db.url);
    server = await startChildServer({
      databaseUrl: db.url,
      env: { ITO_REDIS_URL: redisUrl, ITO_HEARTBEAT_INTERVAL_S: String(INTERVAL_S), ITO_HEARTBEAT_MISSES: String(MISSES), ITO_HANG_STEP_FACTOR: String(HANG_K) },
    });
    const load0 = loadAverage1m();
    const kinds = [];
    if (PARALLEL_KINDS) kinds.push(...(await Promise.all(KINDS.map((kind) => runKind(kind, server!, pool)))));
    else {
      for (const kind of KINDS) {
        const r = await runKind(kind, server, pool);
        say(`${kind}: ${JSON.stringify(r)}`);
        kinds.push(r);
      }
    }
    const result = {
      server: 'ito-server start (all roles, child process)',
      interval_s: INTERVAL_S,
      misses: MISSES,
      hang_step_factor: HANG_K,
      time_scale: TIME_SCALE,
      fault_step: FAULT_STEP,
      kinds_at_once: PARALLEL_KINDS,
      load_average_1m: { before: load0, after: loadAverage1m() },
      kinds,
    };
    process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await server?.stop();
    await pool.end();
    await db.drop();
  }
}

await main();
// Agents whose stop outlived the grace keep retrying a server that is gone; nothing of theirs is measured any more.
process.exit(0);
