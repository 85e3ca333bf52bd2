import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiReader, waitReady, type RunView } from './api.js';
import { deskExplanation, type DeskRunFigures } from './desk-lines.js';
import { runCli, type CliTarget } from './cli.js';
import type { DemoOptions } from './args.js';
import { FaultPlan } from './fault-plan.js';
import { followEvents } from './event-follower.js';
import { Processes, type Managed } from './processes.js';
import { entries, type DemoPaths } from './paths.js';
import { dataPrepFigures, prepareSampleData, type DataPrepFigures } from './sample-data.js';
import { StepError } from './step-error.js';
import type { Terminal } from './terminal.js';

interface Tenant {
  tenant_id: string;
  file_roots: string[];
  requester_key: string;
  approver_key: string;
}

interface Capability {
  name: string;
  availability: string;
}

/** What the demo leaves in `$ITO_HOME/demo/summary.json`: the run and the checks a test (or a person) reads. */
export interface DemoSummary {
  run_id: string;
  state: string;
  api_url: string;
  node_pulled: string | null;
  events_seen: string[];
  audit_verify: 'passed' | 'not_available';
  audit_replay: 'passed' | 'not_available';
  desk_telemetry: 'shown' | 'not_available';
  /** The desk's figures for the run, on its modelled clock (null when the desk did not list it apart). */
  desk_run: { goodput: number | null; usd_per_productive_gpu_hour: number | null; interruptions: number } | null;
  /** What data prep found in the sample corpus it read from the tenant's file root. */
  data_prep: DataPrepFigures | null;
}

const NODES = ['gpu-01', 'gpu-02'];
const RATE_USD_PER_GPU_HOUR = 2.5;

/**
 * The whole system on the embedded default, walked through with the real CLI: every command is printed as
 * it runs, every refusal stops the demo with the step's own message.
 */
export async function runDemo(opts: DemoOptions, paths: DemoPaths, term: Terminal): Promise<DemoSummary> {
  const bin = entries(paths.root);
  const dir = join(paths.home, 'demo');
  mkdirSync(join(dir, 'logs'), { recursive: true, mode: 0o700 });
  const procs = new Processes(join(dir, 'logs'));
  const baseEnv = passThroughEnv();
  const apiUrl = `http://127.0.0.1:${opts.port}`;
  const stopOnSignal = () => void procs.stopAll().then(() => process.exit(130));
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  try {
    term.heading('Start the control plane on the embedded default');
    term.command(`ITO_HOME=${paths.home} ITO_PORT=${opts.port} ito-server start`);
    term.say('embedded PostgreSQL under $ITO_HOME/pg, queues on BullMQ\'s PostgreSQL backend, API + workers + monitor in one process');
    const server = procs.start('ito-server', bin.server, ['start'], {
      ...baseEnv,
      ITO_HOME: paths.home,
      ITO_PORT: String(opts.port),
      ITO_HEARTBEAT_INTERVAL_S: String(opts.heartbeatIntervalS),
      ITO_LOG_LEVEL: 'info',
    });
    if (!(await waitReady(apiUrl, () => server.child.exitCode === null, 180_000))) {
      throw new StepError('start', `ito-server did not become ready; its log is ${server.logFile}`);
    }
    term.ok(`ready at ${apiUrl} (log: ${server.logFile})`);

    const admin: CliTarget = { entry: bin.admin, shown: 'ito-admin', env: { ...baseEnv, ITO_HOME: paths.home } };
    term.heading('Create a tenant and a completed booking of 2 × 8 H200 (the operator, on the ledger database)');
    const tenant = await runCli<Tenant>(term, admin, { step: 'tenant create', args: ['tenant', 'create', '--name', `demo-${Date.now().toString(36)}`, '--requester-principal', 'ml-team', '--approver-principal', 'finance'] });
    term.ok(`tenant ${tenant.tenant_id}: a requester key and an approver key, shown once (kept only in this process)`);
    const now = Date.now();
    const booking = await runCli<{ booking_id: string }>(term, admin, {
      step: 'booking create',
      args: [
        'booking', 'create', '--tenant', tenant.tenant_id, '--gpu', 'h200', '--nodes', '2', '--gpus-per-node', '8', '--region', 'us-east-1',
        '--fabric', 'infiniband', '--term-start', new Date(now - 3600_000).toISOString(), '--term-end', new Date(now + 30 * 86400_000).toISOString(),
        '--rate-usd-per-gpu-hour', String(RATE_USD_PER_GPU_HOUR),
      ],
    });
    term.ok(`booking ${booking.booking_id}`);
    const staff = await runCli<{ key: string }>(term, admin, { step: 'key create', args: ['key', 'create', '--tenant', tenant.tenant_id, '--scopes', 'desk:read,audit:read', '--principal', 'desk-analyst'] });
    term.ok('a desk and audit key for the closing reports');

    term.heading('Two node agents dial out (simulated executor)');
    const agents = new Map<string, Managed>();
    const agentEnv = new Map<string, Record<string, string>>();
    for (const name of NODES) {
      const node = await runCli<{ node_id: string; node_credential: string }>(term, admin, { step: 'node register', args: ['node', 'register', '--booking', booking.booking_id, '--name', name] });
      const env = { ...baseEnv, ITO_API_URL: apiUrl, ITO_NODE_CREDENTIAL: node.node_credential, ITO_TIME_SCALE: String(opts.timeScale), ITO_HOME: join(dir, 'agents', name), ITO_LOG_LEVEL: 'info' };
      agentEnv.set(name, env);
      term.command(`ITO_NODE_CREDENTIAL=$NODE_CREDENTIAL ito-agent --executor simulated   # on ${name}`);
      agents.set(name, procs.start(`agent-${name}`, bin.agent, ['--executor', 'simulated', '--progress-interval-ms', '200'], env));
      term.ok(`${name} is ${node.node_id}`);
    }

    // Keys reach the CLI through its environment only; the printed commands name them by variable.
    const ito: CliTarget = { entry: bin.ito, shown: 'ito', env: { ...baseEnv, ITO_API_URL: apiUrl, ITO_HOME: paths.home, ITO_API_KEY: tenant.requester_key } };
    term.heading('The requester\'s CLI');
    term.command('export ITO_API_KEY=$REQUESTER_KEY');
    const capabilities = await runCli<{ commands: Capability[] }>(term, ito, { step: 'capabilities', args: ['capabilities'] });
    const available = (name: string) => capabilities.commands.some((c) => c.name === name && c.availability === 'available');

    term.heading('Real data: the sample corpus in the tenant\'s file root, named by the manifest');
    const manifest = await prepareSampleData(term, admin, tenant, paths.root);
    term.heading('Plan the example manifest on the booking (creates nothing)');
    await runCli(term, ito, { step: 'plan', args: ['plan', '--booking', booking.booking_id, '--manifest', manifest], human: true });

    term.heading('Ask for a confirmation, and approve it out of band as the approver');
    const confirmation = await runCli<{ confirmation_ref: string }>(term, ito, { step: 'confirm request', args: ['confirm', 'request', '--action', 'train.create', '--booking', booking.booking_id, '--manifest', manifest] });
    term.ok(`confirmation ${confirmation.confirmation_ref} is pending: it allows nothing until approved`);
    const approved = await runCli<{ status: string }>(term, ito, { step: 'confirm approve', args: ['confirm', 'approve', confirmation.confirmation_ref], key: { name: 'APPROVER_KEY', value: tenant.approver_key } });
    term.ok(`${approved.status} by the approver's key (the requester's own key could not approve it)`);

    term.heading('Train: the command the ECC skill hands off to');
    const idempotencyKey = `demo-${Date.now().toString(36)}`;
    const run = await runCli<{ run_id: string; state: string }>(term, ito, {
      step: 'train',
      args: ['train', '--booking', booking.booking_id, '--manifest', manifest, '--confirmation-ref', confirmation.confirmation_ref, '--idempotency-key', idempotencyKey],
    });
    term.ok(`run ${run.run_id} is ${run.state}`);

    term.heading('Watch it through every stage; one node is pulled mid-training');
    term.say(`what follows is the CLI's own output; in another terminal, \`ito logs ${run.run_id} --follow\` prints every line of the run's log as it lands`);
    const get = apiReader(apiUrl, tenant.requester_key);
    const story = followEvents(get, run.run_id);
    let pulled: string | null = null;
    let watched = false;
    const stopped = () => watched;
    const plan = new FaultPlan();
    const chaos = (async () => {
      while (pulled === null) {
        const view = await get<RunView>(`/v1/runs/${run.run_id}`).catch(() => null);
        if (!view || ['succeeded', 'failed', 'cancelled', 'gate_failed'].includes(view.state)) return;
        if (plan.shouldPull(view, story.count('CheckpointSaved'))) {
          pulled = NODES[1]!;
          const victim = agents.get(pulled)!;
          term.command(`kill -9 ${String(victim.child.pid)}   # pull ${pulled}: its agent vanishes without a word`);
          await procs.kill(victim);
          if (opts.bringBack) {
            // The node reboots and its agent dials in again once the loss is on record: it serves the later stages.
            while (story.count('NodeLost') === 0 && !stopped()) await new Promise((r) => setTimeout(r, 250));
            if (stopped()) return;
            term.command(`ITO_NODE_CREDENTIAL=$NODE_CREDENTIAL ito-agent --executor simulated   # ${pulled} rebooted: its agent dials in again`);
            agents.set(pulled, procs.start(`agent-${pulled}-back`, bin.agent, ['--executor', 'simulated', '--progress-interval-ms', '200'], agentEnv.get(pulled)!));
          }
          return;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    try {
      await runCli(term, ito, { step: 'status --watch', args: ['status', run.run_id, '--watch', '--interval', '500'], human: true, timeoutMs: opts.watchTimeoutMs });
    } finally {
      watched = true;
      await chaos;
      await story.stop();
    }
    const final = await get<RunView>(`/v1/runs/${run.run_id}`);
    if (final.state !== 'succeeded') throw new StepError('status --watch', `the run ended ${final.state}; \`ito events ${run.run_id}\` tells why`);
    term.ok(`run ${run.run_id} succeeded`);

    term.heading('What the run left behind');
    await runCli(term, ito, { step: 'metrics', args: ['metrics', run.run_id], human: true });
    await runCli(term, ito, { step: 'checkpoints', args: ['checkpoints', run.run_id], human: true });

    const staffKey = { name: 'DESK_KEY', value: staff.key };
    let desk: DemoSummary['desk_telemetry'] = 'not_available';
    let deskRun: DemoSummary['desk_run'] = null;
    if (available('desk telemetry')) {
      term.heading('The pricing desk\'s telemetry (derived from the ledger alone)');
      await runCli(term, ito, { step: 'desk telemetry', args: ['desk', 'telemetry', '--group-by', 'region,fabric,gpu'], key: staffKey, human: true });
      desk = 'shown';
      deskRun = await explainDesk(term, apiReader(apiUrl, staff.key), run.run_id);
    }
    const audit = { verify: 'not_available', replay: 'not_available' } as { verify: DemoSummary['audit_verify']; replay: DemoSummary['audit_replay'] };
    if (available('audit verify') || available('audit replay')) term.heading('An auditor checks the ledger');
    if (available('audit verify')) {
      await runCli(term, ito, { step: 'audit verify', args: ['audit', 'verify'], key: { name: 'AUDIT_KEY', value: staff.key }, human: true });
      audit.verify = 'passed';
    }
    if (available('audit replay')) {
      await runCli(term, ito, { step: 'audit replay', args: ['audit', 'replay'], key: { name: 'AUDIT_KEY', value: staff.key }, human: true });
      audit.replay = 'passed';
    }

    term.heading('Log the CLI in as the requester, so the commands below work after the demo');
    // Its own 0700 directory: as root the embedded database opens $ITO_HOME to its system user (o+x).
    const tokenFile = join(paths.home, 'cli', 'credentials.json');
    mkdirSync(join(paths.home, 'cli'), { recursive: true, mode: 0o700 });
    term.command(`export ITO_TOKEN_FILE=${tokenFile}`);
    await runCli(term, { ...ito, env: { ...ito.env, ITO_TOKEN_FILE: tokenFile } }, { step: 'login', args: ['login'], key: { name: 'REQUESTER_KEY', value: tenant.requester_key }, input: tenant.requester_key, human: true });

    const summary: DemoSummary = {
      run_id: run.run_id,
      state: final.state,
      api_url: apiUrl,
      node_pulled: pulled,
      events_seen: [...new Set(story.seen())],
      audit_verify: audit.verify,
      audit_replay: audit.replay,
      desk_telemetry: desk,
      desk_run: deskRun,
      data_prep: await dataPrepFigures(get, run.run_id),
    };
    writeFileSync(join(dir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`, { mode: 0o600 });
    printNextSteps(term, { home: paths.home, tokenFile, apiUrl, runId: run.run_id, tenantId: tenant.tenant_id, defaultPort: opts.port === 8420 });
    if (opts.keepRunning) {
      term.say(`the system keeps running at ${apiUrl} (dashboard: ${apiUrl}/desk); Ctrl-C stops it`);
      await new Promise<void>((resolve) => {
        process.removeListener('SIGINT', stopOnSignal);
        process.once('SIGINT', () => resolve());
      });
    }
    return summary;
  } finally {
    await procs.stopAll();
    process.removeListener('SIGINT', stopOnSignal);
    process.removeListener('SIGTERM', stopOnSignal);
  }
}

/** The desk's figures for the run, explained one line each; what the summary keeps of them. */
async function explainDesk(term: Terminal, get: ReturnType<typeof apiReader>, runId: string): Promise<DemoSummary['desk_run']> {
  const data = await get<{ time_scaled_runs?: DeskRunFigures[]; slo_targets_ms: { detection_p95: number; resume_p95: number } }>('/v1/desk/telemetry?group_by=region,fabric,gpu');
  const figures = data.time_scaled_runs?.find((r) => r.group.run === runId);
  if (!figures) {
    term.say('the run kept pace with the wall clock: its figures are in the fleet\'s table above');
    return null;
  }
  for (const line of deskExplanation(figures, { nodes: NODES.length, rate_usd_per_gpu_hour: RATE_USD_PER_GPU_HOUR, slo_targets_ms: data.slo_targets_ms })) term.say(line);
  return { goodput: figures.goodput, usd_per_productive_gpu_hour: figures.effective_usd_per_productive_gpu_hour, interruptions: figures.interruptions.total };
}

function printNextSteps(term: Terminal, at: { home: string; tokenFile: string; apiUrl: string; runId: string; tenantId: string; defaultPort: boolean }): void {
  term.heading('Next');
  term.say(`everything stays in ${at.home}: the ledger, the CLI's login, the agents' and the server's logs (demo/logs)`);
  term.say(`export ITO_HOME=${at.home} ITO_TOKEN_FILE=${at.tokenFile}${at.defaultPort ? '' : ` ITO_PORT=${at.apiUrl.split(':').at(-1)} ITO_API_URL=${at.apiUrl}`}`);
  term.say('npm start                                        # the same system again, on the same data (another terminal)');
  term.say(`npx ito status ${at.runId}`);
  term.say(`npx ito events ${at.runId}`);
  term.say(`npx ito logs ${at.runId} --follow`);
  // The page asks for a desk credential; the demo's own is not kept, so this makes one (shown once, as JSON).
  term.say(`npx ito-admin key create --tenant ${at.tenantId} --scopes desk:read --principal desk-analyst --json   # a desk credential for the page (while the server runs)`);
  term.say(`open ${at.apiUrl}/desk                            # the pricing desk's dashboard (while the server runs): paste the key above`);
  term.say('npm run demo -- --keep-running                    # keep the system up at the end of the demo');
}

/** Children get the user's basics and nothing of the user's own ITO_* settings: the demo is self-contained. */
function passThroughEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'TMPDIR', 'TZ', 'NO_COLOR', 'TERM']) {
    const value = process.env[name];
    if (value) env[name] = value;
  }
  return env;
}
