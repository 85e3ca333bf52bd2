import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostHeartbeats, SimulatedExecutor, type HeartbeatSender } from '@ito/agent';
import { createLogger } from '@ito/config';
import { smallManifest } from '../../../test/support/manifests.js';
import { runEvents, seedTenant, startPipeline, submitRun, type Pipeline } from '../../../test/support/pipeline.js';
import { startMonitor, type RunningMonitor } from '../src/monitor/monitor.js';

/**
 * The monitor judges beats that arrive in a host's batch as it judges single ones: the agents of one process
 * send their beats through one `POST /v1/agent/heartbeats` per interval, a node whose beats stop coming (its
 * agent still runs and reports, only its beats are held back) is declared lost within its bound, and the node
 * whose beats keep arriving in the batch is not.
 */
const INTERVAL_S = 1;
const MISSES = 3;
let p: Pipeline;
let monitor: RunningMonitor | null = null;
const silenced = new Set<string>();
const host = new HostHeartbeats();
beforeAll(async () => {
  p = await startPipeline('postgres', {
    heartbeatIntervalS: INTERVAL_S,
    heartbeatSender: (credential, api): HeartbeatSender => {
      const batched = host.sender(credential, api);
      // A silenced node's beat is never sent nor answered: its agent then beats no more, as a frozen one.
      return (body) => (silenced.has(credential) ? new Promise(() => undefined) : batched(body));
    },
  });
});
afterAll(async () => {
  await monitor?.stop();
  await p?.close();
});

const metric = async (prefix: string, route?: string) => {
  const text = await (await fetch(`${p.api.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(prefix) && (route === undefined || l.includes(`route="${route}"`)))
    .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
};
const requestsTo = (route: string) => metric('ito_http_requests_total{', route);

describe('detection with batched heartbeats', () => {
  it('declares a node missing from its host’s batches lost within interval × misses and one sweep, and not the node still in them', async () => {
    const seed = await seedTenant(p.api);
    const credentials = new Map<string, string>();
    const nodes = [];
    for (const name of ['gpu-01', 'gpu-02']) {
      const node = await p.api.admin.registerNode({ bookingId: seed.bookingId, name });
      credentials.set(node.node_id, node.node_credential);
      // 200× simulated time: a step every ~0.1 s, a stage far longer than this test.
      nodes.push({ node_id: node.node_id, agent: await p.startAgent(node.node_credential, new SimulatedExecutor({ timeScale: 200, progressIntervalMs: 100 })) });
    }
    const runId = await submitRun(p.api, seed, smallManifest());
    const deadline = Date.now() + 60_000;
    let started;
    while (!started && Date.now() < deadline) {
      started = (await runEvents(p.api, seed, runId)).find((e) => e.type === 'StageStarted' && e.data.stage === 'pretrain');
      if (!started) await new Promise((r) => setTimeout(r, 100));
    }
    expect(started, 'the pretrain stage started').toBeDefined();
    // The agents beat through the batch route only.
    await new Promise((r) => setTimeout(r, 2_500 * INTERVAL_S));
    const batches = await requestsTo('/v1/agent/heartbeats');
    expect(batches).toBeGreaterThan(0);
    expect(await requestsTo('/v1/agent/heartbeat')).toBe(0);
    // Both agents' beats in each batch (the first may have gone before the second agent was made).
    expect(await metric('ito_heartbeats_ingested_total ')).toBeGreaterThanOrEqual(2 * batches - 1);

    const logger = createLogger({ level: 'silent', name: 'monitor' });
    monitor = startMonitor({ pool: p.api.pool, ledger: p.api.ledger, logger, settings: { interval_s: INTERVAL_S, misses: MISSES, hang_factor: 5, first_step_max_s: 300 } });
    await new Promise((r) => setTimeout(r, 1_500 * INTERVAL_S));
    const victim = nodes[1]!.node_id;
    silenced.add(credentials.get(victim)!);

    let lost;
    const until = Date.now() + 30_000;
    while (!lost && Date.now() < until) {
      lost = (await runEvents(p.api, seed, runId)).find((e) => e.type === 'NodeLost');
      if (!lost) await new Promise((r) => setTimeout(r, 100));
    }
    expect(lost, 'a node was declared lost').toBeDefined();
    expect(lost!.data.node_id).toBe(victim);
    const detectedAfterS = (Date.parse(lost!.data.detected_at) - Date.parse(lost!.data.last_heartbeat_at)) / 1000;
    // Lost once silent for the misses, seen by the next sweep (a quarter interval apart), and by the next beat's lateness.
    expect(detectedAfterS).toBeGreaterThan(INTERVAL_S * MISSES);
    expect(detectedAfterS).toBeLessThan(INTERVAL_S * MISSES + 2 * INTERVAL_S);
    const events = await runEvents(p.api, seed, runId);
    expect(events.filter((e) => e.type === 'NodeLost' || e.type === 'TaskHung').map((e) => e.data.node_id)).toEqual([victim]);
  });
});
