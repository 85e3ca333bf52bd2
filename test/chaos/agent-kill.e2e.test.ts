import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type Cluster, eventsOfType as of } from './support/cluster.js';

let cluster: Cluster | null = null;
afterEach(async () => {
  await cluster?.stop();
  cluster = null;
});


describe('chaos: an agent killed with SIGKILL mid-training', () => {
  it('is declared lost after the misses, only its node is replaced (by the spare), training resumes from the last checkpoint and the run succeeds', async () => {
    cluster = await startCluster({ nodes: 2, spares: 1, intervalS: 1, timeScale: 16_000 });
    const c = cluster;
    const run = await c.submitRun();
    // Mid-pretrain, once a checkpoint exists.
    const started = await c.waitFor(run, 'a pretrain checkpoint', (e) => e.some((x) => x.type === 'CheckpointSaved' && x.data.stage === 'pretrain') && e.find((x) => x.type === 'StageStarted' && x.data.stage === 'pretrain'));
    const victimId = started.data.tasks.find((t: any) => t.rank === 1).node_id as string;
    const healthyId = started.data.tasks.find((t: any) => t.rank === 0).node_id as string;
    const victim = [...c.nodeIds].find(([, id]) => id === victimId)![0];
    const spareId = [...c.nodeIds.values()].find((id) => id !== victimId && id !== healthyId)!;
    await c.agents.get(victim)!.kill9();

    const events = await c.waitFor(run, 'the run to end', (e) => e.some((x) => ['RunSucceeded', 'RunFailed'].includes(x.type)) && e, 150_000);
    expect(of(events, 'RunSucceeded'), c.tails()).toHaveLength(1);
    expect(await c.ledgerFindings(run)).toEqual([]);

    const lost = of(events, 'NodeLost');
    expect(lost).toHaveLength(1);
    expect(lost[0]!.data).toMatchObject({ node_id: victimId, stage: 'pretrain', misses: 3, interval_s: 1 });
    const silent = (Date.parse(lost[0]!.data.detected_at) - Date.parse(lost[0]!.data.last_heartbeat_at)) / 1000;
    expect(silent).toBeGreaterThan(3);
    expect(of(events, 'TaskHung')).toEqual([]);

    const resumed = of(events, 'RunResumed').find((e) => e.data.incident?.kind === 'node_lost')!;
    expect(resumed.data).toMatchObject({ stage: 'pretrain', spare_nodes: [spareId], replaced_nodes: [victimId] });
    expect(resumed.data.nodes.sort()).toEqual([healthyId, spareId].sort());
    // No checkpoint lost: it resumes from the newest pretrain checkpoint saved before the loss.
    const before = events.filter((e) => e.position < lost[0]!.position && e.type === 'CheckpointSaved' && e.data.stage === 'pretrain');
    const newest = before.sort((a, b) => b.data.step - a.data.step)[0]!;
    expect(resumed.data.from_checkpoint_id).toBe(newest.data.checkpoint_id);
    expect(resumed.data.resume_latency_s).toBeGreaterThanOrEqual(0);
    // The dead node never gets a task again.
    const later = events.filter((e) => e.position > lost[0]!.position && e.type === 'StageStarted' && e.data.tasks);
    expect(later.flatMap((e) => e.data.tasks.map((t: any) => t.node_id))).not.toContain(victimId);
  }, 240_000);
});
