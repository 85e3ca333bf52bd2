import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type Cluster, eventsOfType as of } from './support/cluster.js';

let cluster: Cluster | null = null;
afterEach(async () => {
  await cluster?.stop();
  cluster = null;
});


describe('chaos: a node of a booking with no spare is lost, then comes back', () => {
  it('the run goes on re-planned on the node left, and the next stage grows back onto both', async () => {
    cluster = await startCluster({ nodes: 2, spares: 0, intervalS: 1, timeScale: 16_000 });
    const c = cluster;
    const run = await c.submitRun();
    const started = await c.waitFor(run, 'a pretrain checkpoint', (e) => e.some((x) => x.type === 'CheckpointSaved' && x.data.stage === 'pretrain') && e.find((x) => x.type === 'StageStarted' && x.data.stage === 'pretrain'));
    const victimId = started.data.tasks.find((t: any) => t.rank === 1).node_id as string;
    const victim = [...c.nodeIds].find(([, id]) => id === victimId)![0];
    await c.agents.get(victim)!.kill9();
    await c.waitFor(run, 'the loss', (e) => e.some((x) => x.type === 'NodeLost'));
    // The node reboots: its agent dials in again with the same credential.
    c.startAgent(victim);

    const events = await c.waitFor(run, 'the run to end', (e) => e.some((x) => ['RunSucceeded', 'RunFailed'].includes(x.type)) && e, 150_000);
    expect(of(events, 'RunSucceeded'), c.tails()).toHaveLength(1);
    expect(await c.ledgerFindings(run)).toEqual([]);

    // Pretrain resumed on the one node left, its plan shrunk to it.
    const resumed = of(events, 'RunResumed').find((e) => e.data.incident?.kind === 'node_lost')!;
    expect(resumed.data).toMatchObject({ stage: 'pretrain', replaced_nodes: [victimId], replanned_nodes: 1 });
    expect(resumed.data.nodes).toHaveLength(1);
    expect(of(events, 'NodeRecovered').map((e) => e.data.node_id)).toEqual([victimId]);
    // The next training stage starts on both nodes again, under a plan for two.
    const midTrain = events.find((e) => e.type === 'StageStarted' && e.data.stage === 'mid_train')!;
    expect(midTrain.data.tasks.map((t: any) => t.node_id)).toContain(victimId);
    expect(midTrain.data.tasks).toHaveLength(2);
    const plans = events.filter((e) => e.type === 'PlanComputed' && e.position < midTrain.position);
    expect(plans.at(-1)!.data.plan.nodes).toBe(2);
  }, 240_000);
});
