import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type Cluster, eventsOfType as of } from './support/cluster.js';

let cluster: Cluster | null = null;
afterEach(async () => {
  await cluster?.stop();
  cluster = null;
});

/** Pretrain runs about 4,750 steps; by step 3,000 several checkpoints are saved. */
const HANG_STEP = 3_000;

describe('chaos: the trainer of rank 1 hangs while its agent keeps beating', () => {
  it('is declared hung (not lost) within the misses of its last step, its node is replaced by the spare, and the run succeeds', async () => {
    // Every agent carries the fault; only the one that runs rank 1 of pretrain's first attempt meets it. Rank 0 never
    // hangs, so this proves a hang is seen on a rank that does not report progress.
    cluster = await startCluster({
      nodes: 2,
      spares: 1,
      intervalS: 1,
      timeScale: 16_000,
      agentEnv: () => ({ ITO_SIM_FAULTS: `hang@step=${HANG_STEP},stage=pretrain,rank=1,attempt=1` }),
    });
    const c = cluster;
    const run = await c.submitRun();
    const started = await c.waitFor(run, 'pretrain to start', (e) => e.find((x) => x.type === 'StageStarted' && x.data.stage === 'pretrain'));
    const hungId = started.data.tasks.find((t: any) => t.rank === 1).node_id as string;
    const healthyId = started.data.tasks.find((t: any) => t.rank === 0).node_id as string;
    const spareId = [...c.nodeIds.values()].find((id) => id !== hungId && id !== healthyId)!;

    const events = await c.waitFor(run, 'the run to end', (e) => e.some((x) => ['RunSucceeded', 'RunFailed'].includes(x.type)) && e, 120_000);
    expect(of(events, 'RunSucceeded'), c.tails()).toHaveLength(1);
    expect(await c.ledgerFindings(run)).toEqual([]);

    expect(of(events, 'NodeLost')).toEqual([]);
    const hung = of(events, 'TaskHung');
    expect(hung).toHaveLength(1);
    expect(hung[0]!.data).toMatchObject({ node_id: hungId, stage: 'pretrain', attempt: 1, k: 5 });
    // Judged on the measured step time (about a millisecond at this time scale), so the floor of the misses
    // (3 × 1 s) decides: stuck for more than that, and detected within a few intervals, not the plan's minutes.
    expect(hung[0]!.data.expected_step_s).toBeLessThan(0.1);
    expect(hung[0]!.data.stuck_s).toBeGreaterThan(3);
    const detection = (Date.parse(hung[0]!.data.detected_at) - Date.parse(hung[0]!.data.last_progress_at)) / 1000;
    expect(detection).toBeLessThan(3 + 3 * c.intervalS);
    // The hung rank's last step is the fault's step: the heartbeat carried rank 1's own progress.
    expect(hung[0]!.data.step).toBe(HANG_STEP);

    const resumed = of(events, 'RunResumed').find((e) => e.data.incident?.kind === 'hang')!;
    expect(resumed.data).toMatchObject({ stage: 'pretrain', spare_nodes: [spareId], replaced_nodes: [hungId] });
    expect(resumed.data.nodes.sort()).toEqual([healthyId, spareId].sort());
    // The agent of the hung task confirmed it stopped it, without a final checkpoint (a hung trainer cannot save).
    const stopped = of(events, 'TaskStopped').filter((e) => e.data.node_id === hungId && e.data.attempt === 1);
    expect(stopped).toHaveLength(1);
    expect(events.some((e) => e.type === 'CheckpointSaved' && e.data.final && e.data.attempt === 1 && e.data.task_id === hung[0]!.data.task_id)).toBe(false);
  }, 240_000);
});
