import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Agent, type Executor, type HeartbeatSender } from '@ito/agent';
import { AgentApi, ItoClient } from '@ito/client';
import { createLogger } from '@ito/config';
import { manifestDigest, type Rendezvous } from '@ito/contracts';
import { createJobClient, createQueueKit, startJobWorkers, type QueueBackendConfig, type QueueKit } from '@ito/queue';
import { RUN_EVENTS_CHANNEL } from '@ito/runs';
import { defaultStorageRegistry, type StorageRegistry } from '@ito/storage';
import { createRunEvaluator, orchestratorProjection, pipelineHandlers, pipelineJobs, startRelay, storageCheckpointRemover, type PipelineResources, type Relay } from '@ito/worker';
import { EXAMPLE_MANIFEST, seedTenant, startApi, type Api, type Seed } from './api.js';
import { withDatabase } from './global-setup.js';
import { redisForTests } from './db.js';

export type BackendKind = 'redis' | 'postgres';

/**
 * The whole control plane in this process, on real services: the API on a loopback port (fresh database), the
 * pipeline's BullMQ workers on the chosen backend, and the orchestrator relay. Agents are real `Agent`s talking
 * HTTP to the API with node credentials; only what runs a task on a node is chosen by the test.
 */
export async function startPipeline(
  backend: BackendKind,
  opts: {
    heartbeatIntervalS?: number;
    relay?: boolean;
    storage?: StorageRegistry;
    /** Where each agent's beats go (a host's batch, `HostHeartbeats.sender`); absent: the single-node route. */
    heartbeatSender?: (nodeCredential: string, api: AgentApi) => HeartbeatSender;
  } = {},
) {
  const api = await startApi({ agent: { heartbeatIntervalS: opts.heartbeatIntervalS ?? 1, heartbeatMisses: 3 } });
  const db = new URL(api.pool.options.connectionString!);
  const cfg: QueueBackendConfig =
    backend === 'redis' ? { kind: 'redis', redisUrl: requireRedis() } : { kind: 'postgres', databaseUrl: withDatabase(db.toString(), db.pathname.slice(1)) };
  const kit: QueueKit = createQueueKit(cfg, { prefix: `p${randomBytes(4).toString('hex')}` });
  const workerLog: string[] = [];
  const logger = createLogger({ level: 'info', destination: new Writable({ write: (c, _e, cb) => (workerLog.push(String(c)), cb()) }) });
  const res: PipelineResources = {
    pool: api.pool,
    ledger: api.ledger,
    logger,
    now: () => new Date(),
    nodeAliveWithinMs: (opts.heartbeatIntervalS ?? 1) * 3 * 1000,
    checkpoints: storageCheckpointRemover(opts.storage ?? defaultStorageRegistry()),
    ...(opts.storage ? { storage: opts.storage } : {}),
    evalBatteryDir: fileURLToPath(new URL('../fixtures/evals', import.meta.url)),
    evalBatteries: { registry: api.batteries, storage: opts.storage ?? defaultStorageRegistry() },
  };
  const handlers = pipelineHandlers(res);
  if (opts.relay !== false) startJobWorkers(kit, pipelineJobs, handlers, { concurrency: 8 });
  const jobs = createJobClient(kit, pipelineJobs);
  // Without the relay nothing is enqueued: a test then drives the handlers itself.
  const evaluator = createRunEvaluator(jobs, logger);
  const relay: Relay | null =
    opts.relay === false ? null : startRelay(api.ledger, orchestratorProjection(evaluator), evaluator, logger, { listenOn: { pool: api.pool, channel: RUN_EVENTS_CHANNEL } });
  const agents: Agent[] = [];

  async function startAgent(nodeCredential: string, executor: Executor, rendezvous: Rendezvous | null = null): Promise<Agent> {
    const http = new ItoClient({ baseUrl: api.url, credential: nodeCredential, timeoutMs: 40_000, backoff: { baseMs: 50, maxMs: 500 } });
    const agentApi = new AgentApi(http);
    const agent = new Agent({
      api: agentApi,
      ...(opts.heartbeatSender ? { heartbeat: opts.heartbeatSender(nodeCredential, agentApi) } : {}),
      executor,
      logger,
      version: 'test',
      rendezvous,
      gpus: () => Array.from({ length: 8 }, (_, index) => ({ index, healthy: true })),
      progressIntervalMs: 100,
      pollWaitS: 5,
      retryMs: 100,
      stopGraceMs: 5_000,
    });
    await agent.start();
    agents.push(agent);
    return agent;
  }

  /** Registers `n` nodes on the seed's booking and starts an agent on each, all with the same executor. */
  async function startNodes(
    seed: Seed,
    executor: (name: string) => Executor,
    n = 2,
    prefix = 'gpu',
    rendezvous: (name: string) => Rendezvous | null = () => null,
  ): Promise<Array<{ node_id: string; agent: Agent }>> {
    const out: Array<{ node_id: string; agent: Agent }> = [];
    for (let i = 1; i <= n; i++) {
      const name = `${prefix}-${String(i).padStart(2, '0')}`;
      const node = await api.admin.registerNode({ bookingId: seed.bookingId, name });
      out.push({ node_id: node.node_id, agent: await startAgent(node.node_credential, executor(name), rendezvous(name)) });
    }
    return out;
  }

  return {
    api,
    kit,
    jobs,
    res,
    handlers,
    workerLog,
    startAgent,
    startNodes,
    async close() {
      await Promise.all(agents.map((a) => a.stop()));
      await relay?.stop();
      await kit.close();
      await api.close();
    },
  };
}

export type Pipeline = Awaited<ReturnType<typeof startPipeline>>;

function requireRedis(): string {
  const { url, skipReason } = redisForTests();
  if (!url) throw new Error(`Redis is needed for this test: ${skipReason}`);
  return url;
}

/** Requests, approves and submits a train of `manifest`; returns the run id. */
export async function submitRun(api: Api, seed: Seed, manifest = EXAMPLE_MANIFEST, key = `run-${randomBytes(4).toString('hex')}`): Promise<string> {
  const digest = manifestDigest(manifest);
  const c = await api.call('POST', '/v1/confirmations', { key: seed.requester, body: { action: 'train.create', booking_id: seed.bookingId, manifest, manifest_digest: digest } });
  if (c.status !== 201) throw new Error(`confirmation refused: ${JSON.stringify(c.body)}`);
  const ref = c.body.data.confirmation_ref as string;
  await api.call('POST', `/v1/confirmations/${ref}/approve`, { key: seed.approver });
  const r = await api.call('POST', '/v1/runs', {
    key: seed.requester,
    body: { booking_id: seed.bookingId, manifest, manifest_digest: digest, confirmation_ref: ref },
    headers: { 'idempotency-key': key },
  });
  if (r.status !== 201) throw new Error(`train refused: ${JSON.stringify(r.body)}`);
  return r.body.data.run_id as string;
}

/** Polls the run until its state is one of `states`; fails with the run's events if it does not get there. */
export async function waitForState(api: Api, seed: Seed, runId: string, states: string[], timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    last = (await api.call('GET', `/v1/runs/${runId}`, { key: seed.requester })).body.data;
    if (states.includes(last.state)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  const events = (await api.call('GET', `/v1/runs/${runId}/events`, { key: seed.requester })).body.data.events.map((e: any) => e.type);
  throw new Error(`run ${runId} is ${last?.state}, not ${states.join('|')}, after ${timeoutMs} ms; events: ${events.join(', ')}`);
}

export async function runEvents(api: Api, seed: Seed, runId: string): Promise<Array<{ type: string; data: any; position: number }>> {
  return (await api.call('GET', `/v1/runs/${runId}/events`, { key: seed.requester })).body.data.events;
}

/**
 * A node of `bookingId` registered as its agent would register it (one healthy GPU unless told), with `call` for
 * the agent routes under its own credential (`call('GET', '/assignments?wait_s=0')`).
 */
export async function registeredNode(api: Api, bookingId: string, name: string, gpus: unknown[] = [{ index: 0, healthy: true }]) {
  const n = await api.admin.registerNode({ bookingId, name });
  const call = (method: string, path: string, body?: unknown) => api.call(method, `/v1/agent${path}`, { key: n.node_credential, ...(body !== undefined ? { body } : {}) });
  const reg = await call('POST', '/register', { agent_version: 'test', executor: 'simulated', gpus });
  if (reg.status !== 200) throw new Error(`node registration refused (${reg.status}): ${JSON.stringify(reg.body)}`);
  return { ...n, call, credential: n.node_credential };
}

export { seedTenant };
