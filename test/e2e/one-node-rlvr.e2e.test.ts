import { afterEach, describe, expect, it } from 'vitest';
import { EXAMPLE_MANIFEST } from '../support/api.js';
import { startCluster, type Cluster, eventsOfType as of } from '../chaos/support/cluster.js';

let cluster: Cluster | null = null;
afterEach(async () => {
  await cluster?.stop();
  cluster = null;
});

/**
 * The example manifest on a booking of one node, through the built processes (the all-in-one server with its
 * monitor, one agent on the simulated executor at a fast clock): RLVR runs colocated to the end, and nothing is
 * judged hung on the way (docs/pipeline.md, "Trainer and rollout" and "Start-up allowance").
 */
describe('the example manifest on a one-node booking', () => {
  it('trains every stage, RLVR colocated, to succeeded, with the ledger whole', async () => {
    cluster = await startCluster({ nodes: 1, intervalS: 1, timeScale: 100_000, manifest: EXAMPLE_MANIFEST });
    const c = cluster;
    const run = await c.submitRun();
    const events = await c.waitFor(run, 'the run to end', (e) => e.some((x) => ['RunSucceeded', 'RunFailed'].includes(x.type)) && e, 120_000);
    expect(of(events, 'RunSucceeded'), c.tails()).toHaveLength(1);
    expect(await c.ledgerFindings(run)).toEqual([]);
    expect(of(events, 'StageFailed').map((e) => e.data.reason)).toEqual([]);
    expect(of(events, 'TaskHung')).toEqual([]);

    const rlvr = of(events, 'StageStarted', 'rlvr')[0]!.data;
    expect(rlvr.tasks.map((t: any) => t.role)).toEqual(['trainer']);
    expect(rlvr.spec.rollout).toBe('colocated');
    expect(of(events, 'TaskCompleted', 'rlvr')[0]!.data.metrics.rlvr_batches_accepted).toBeGreaterThan(0);
    expect((await c.call('GET', `/v1/runs/${run}`)).body.data).toMatchObject({ state: 'succeeded', waiting_for: null });
  }, 150_000);
});
