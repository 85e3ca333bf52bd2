import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { manifestDigest } from '@ito/contracts';
import { ITO_ADMIN, runCli } from '../../../apps/cli/test/support/cli.js';
import { EXAMPLE_MANIFEST } from '../../support/api.js';
import { freshDatabase } from '../../support/db.js';
import type { ScratchDatabase } from '../../support/scratch-db.js';
import { freePort } from '../../support/services.js';
import { ledgerFindings, type LedgerExpectations } from './ledger-checks.js';
import { AGENT, SERVER, startProcess, waitReady, type Proc } from './processes.js';

export interface LedgerEvent {
  position: number;
  version: number;
  type: string;
  recorded_at: string;
  data: any;
}

/** The events of one type (and, when given, of one stage) in ledger order. */
export const eventsOfType = (events: LedgerEvent[], type: string, stage?: string): LedgerEvent[] =>
  events.filter((e) => e.type === type && (stage === undefined || e.data.stage === stage));

/**
 * The example manifest trimmed to pretrain and mid-train (their gates kept): every scenario breaks something in
 * pretrain, and one needs the next training stage; the long-context and post-training stages would only add time.
 */
export const CHAOS_MANIFEST = (() => {
  const m = JSON.parse(EXAMPLE_MANIFEST);
  m.target.curriculum = ['pretrain', 'mid_train'];
  delete m.eval.gates.long_context;
  delete m.eval.gates.post_training;
  return `${JSON.stringify(m, null, 2)}\n`;
})();

export interface ClusterOptions {
  /** Nodes the booking plans for, plus spares registered beyond them. */
  nodes?: number;
  spares?: number;
  intervalS?: number;
  hangFactor?: number;
  timeScale?: number;
  /** One server process per entry, each with these roles (`[]` is the all-in-one default). */
  servers?: string[][];
  /** Where the servers reach PostgreSQL (a proxy in front of it), if not directly. */
  serverDatabaseUrl?: (direct: string) => string;
  agentEnv?: (name: string) => Record<string, string>;
  /** A migrated database of the test's own (a private PostgreSQL) instead of a scratch one on the shared server. */
  database?: ScratchDatabase;
  /** Queue on this Redis (BullMQ) instead of PostgreSQL. */
  redisUrl?: string;
  /** More environment for every server process (e.g. a short job lock). */
  serverEnv?: Record<string, string>;
  /** The agents' flags (default: the simulated executor). */
  agentArgs?: (name: string) => string[];
  /** The manifest `submitRun` trains (default: CHAOS_MANIFEST). */
  manifest?: string;
  /** Run after the tenant is created, e.g. to set its policy with `ito-admin`. */
  setup?: (admin: (args: string[]) => Promise<any>, tenantId: string) => Promise<void>;
}

/**
 * A whole control plane as real processes on a fresh database: `ito-server` processes, one `ito-agent` per node
 * (simulated executor), a tenant and a booking made with `ito-admin`. The test breaks parts of it (kill -9,
 * SIGSTOP, a paused database) and then reads what happened from the run's ledger.
 */
export async function startCluster(opts: ClusterOptions = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ito-chaos-'));
  const db: ScratchDatabase = opts.database ?? (await freshDatabase());
  const intervalS = opts.intervalS ?? 1;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const serverEnv = (i: number): Record<string, string> => ({
    ITO_HOME: join(dir, `server-${i}`),
    ITO_PORT: String(port),
    ITO_DATABASE_URL: opts.serverDatabaseUrl ? opts.serverDatabaseUrl(db.url) : db.url,
    ITO_HEARTBEAT_INTERVAL_S: String(intervalS),
    ITO_HANG_STEP_FACTOR: String(opts.hangFactor ?? 5),
    // The example manifest's checkpoints are on s3://, which the simulated agents only model.
    ITO_STORAGE_SIMULATED_SCHEMES: 's3',
    ...(opts.redisUrl ? { ITO_REDIS_URL: opts.redisUrl } : {}),
    ITO_LOG_LEVEL: 'info',
    ...(opts.serverEnv ?? {}),
  });
  const servers: Proc[] = [];
  const agents = new Map<string, Proc>();
  const nodeIds = new Map<string, string>();
  const credentials = new Map<string, string>();

  /** Stops every process started so far and drops what was made; also what a failed start-up does before it throws. */
  const stopAll = async (): Promise<void> => {
    for (const p of [...agents.values()]) {
      if (p.child.signalCode === 'SIGSTOP' || p.child.exitCode === null) p.child.kill('SIGCONT');
      p.child.kill('SIGKILL');
    }
    await Promise.all([...agents.values()].map((p) => p.exited));
    for (const s of servers) s.child.kill('SIGTERM');
    await Promise.all(servers.map((s) => Promise.race([s.exited, new Promise((r) => setTimeout(r, 10_000))])));
    for (const s of servers) s.child.kill('SIGKILL');
    await db.drop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  /** A start-up step: if it fails, nothing this cluster started is left running (the test never got a cluster to stop). */
  const guarded = async <T>(step: () => Promise<T>): Promise<T> => {
    try {
      return await step();
    } catch (err) {
      await stopAll();
      throw err;
    }
  };

  const startServer = async (roles: string[], i = servers.length): Promise<Proc> => {
    const p = startProcess(`ito-server ${roles.join(',') || 'all'} #${i}`, SERVER, ['start', ...roles.flatMap((r) => ['--role', r])], serverEnv(i));
    servers.push(p);
    return p;
  };
  for (const [i, roles] of (opts.servers ?? [[]]).entries()) await startServer(roles, i);
  const apiServer = servers.find((_, i) => (opts.servers ?? [[]])[i]!.length === 0 || (opts.servers ?? [[]])[i]!.includes('api'))!;
  await guarded(() => waitReady(url, apiServer));

  const admin = async (args: string[]) => {
    const r = await runCli([...args, '--json'], { entry: ITO_ADMIN, env: { ITO_DATABASE_URL: db.url, ITO_HOME: join(dir, 'admin') } });
    if (r.code !== 0) throw new Error(`ito-admin ${args.join(' ')}: ${r.stdout} ${r.stderr}`);
    return r.json().data;
  };
  const tenant = await guarded(() => admin(['tenant', 'create', '--name', 'acme', '--requester-principal', 'ml@acme', '--approver-principal', 'finance@acme']));
  await guarded(async () => opts.setup?.(admin, tenant.tenant_id));
  const now = Date.now();
  const planned = opts.nodes ?? 2;
  const booking = await guarded(() => admin([
    'booking', 'create', '--tenant', tenant.tenant_id, '--gpu', 'h200', '--nodes', String(planned), '--gpus-per-node', '8', '--region', 'us-east-1',
    '--fabric', 'infiniband', '--term-start', new Date(now - 3600_000).toISOString(), '--term-end', new Date(now + 30 * 86400_000).toISOString(),
    '--rate-usd-per-gpu-hour', '2.5',
  ]));

  const startAgent = (name: string, extra: Record<string, string> = {}): Proc => {
    const p = startProcess(`ito-agent ${name}`, AGENT, opts.agentArgs?.(name) ?? ['--executor', 'simulated', '--progress-interval-ms', '100'], {
      ITO_API_URL: url,
      ITO_NODE_CREDENTIAL: credentials.get(name)!,
      ITO_TIME_SCALE: String(opts.timeScale ?? 20_000),
      ITO_LOG_LEVEL: 'info',
      ITO_HOME: join(dir, name),
      ...(opts.agentEnv?.(name) ?? {}),
      ...extra,
    });
    agents.set(name, p);
    return p;
  };
  const names = Array.from({ length: planned + (opts.spares ?? 0) }, (_, i) => `gpu-${String(i + 1).padStart(2, '0')}`);
  // Registered side by side (each is a CLI process), then started in name order.
  const registered = await guarded(() => Promise.all(names.map((name) => admin(['node', 'register', '--booking', booking.booking_id, '--name', name]))));
  for (const [i, name] of names.entries()) {
    nodeIds.set(name, registered[i].node_id);
    credentials.set(name, registered[i].node_credential);
    startAgent(name);
  }

  const call = async (method: string, path: string, body?: unknown, key = tenant.requester_key, headers: Record<string, string> = {}) => {
    const r = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: r.status, body: (await r.json()) as any };
  };

  /** Requests and approves a train of the cluster's manifest; returns the body POST /v1/runs takes. */
  const approvedTrain = async () => {
    const manifest = opts.manifest ?? CHAOS_MANIFEST;
    const digest = manifestDigest(manifest);
    const c = await call('POST', '/v1/confirmations', { action: 'train.create', booking_id: booking.booking_id, manifest, manifest_digest: digest });
    if (c.status !== 201) throw new Error(`confirmation refused: ${JSON.stringify(c.body)}`);
    const ref = c.body.data.confirmation_ref as string;
    await call('POST', `/v1/confirmations/${ref}/approve`, undefined, tenant.approver_key);
    return { booking_id: booking.booking_id, manifest, manifest_digest: digest, confirmation_ref: ref };
  };

  /** Requests, approves and submits a train of the cluster's manifest; returns the run id. */
  const submitRun = async (key = 'chaos-run'): Promise<string> => {
    const r = await call('POST', '/v1/runs', await approvedTrain(), tenant.requester_key, { 'idempotency-key': key });
    if (r.status !== 201) throw new Error(`train refused: ${JSON.stringify(r.body)}`);
    return r.body.data.run_id as string;
  };

  /** Every event an answered read showed the test: none of them may be lost or changed later. */
  const acknowledged = new Map<number, LedgerEvent>();
  const events = async (runId: string): Promise<LedgerEvent[]> => {
    const r = await call('GET', `/v1/runs/${runId}/events`);
    if (r.status !== 200) throw new Error(`events of ${runId}: ${JSON.stringify(r.body)}`);
    const answered = r.body.data.events as LedgerEvent[];
    for (const e of answered) acknowledged.set(e.position, e);
    return answered;
  };

  /** Waits on the ledger until `found` returns something; fails with the events and every process's output tail. */
  const waitFor = async <T>(runId: string, what: string, found: (events: LedgerEvent[]) => T | undefined | null | false, timeoutMs = 90_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    let last: LedgerEvent[] = [];
    while (Date.now() < deadline) {
      try {
        last = await events(runId);
        const hit = found(last);
        if (hit) return hit;
      } catch {
        // the API may be down on purpose; try again
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${what} did not happen in ${timeoutMs} ms; events: ${last.map((e) => e.type).join(', ')}\n${tails()}`);
  };

  const tails = () => [...servers, ...agents.values()].map((p) => `--- ${p.name}\n${p.output().slice(-3000)}`).join('\n');

  return {
    dir,
    db,
    url,
    intervalS,
    tenant,
    booking,
    servers,
    agents,
    nodeIds,
    names,
    startAgent,
    startServer,
    call,
    approvedTrain,
    submitRun,
    events,
    waitFor,
    tails,
    acknowledged,
    /** The shared ledger assertions (support/ledger-checks.ts) for this cluster's run; [] when the ledger is whole. */
    ledgerFindings: (runId: string, ends: LedgerExpectations['ends'] = { event: 'RunSucceeded', state: 'succeeded' }) =>
      ledgerFindings(db.url, { runId, tenantId: tenant.tenant_id, ends, acknowledged: acknowledged.values() }),
    stop: stopAll,
  };
}

export type Cluster = Awaited<ReturnType<typeof startCluster>>;

