import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type Cluster, eventsOfType as of } from './support/cluster.js';
import { waitReady } from './support/processes.js';

let cluster: Cluster | null = null;
afterEach(async () => {
  await cluster?.stop();
  cluster = null;
});

const DOWN_MS = 4_000;

describe('chaos: the whole control plane (all roles, one process) is killed mid-training and started again', () => {
  it('agents keep training, hold their reports, reattach and deliver them: no node lost, no report lost or recorded twice, the run succeeds', async () => {
    cluster = await startCluster({ nodes: 2, spares: 1, intervalS: 1, timeScale: 16_000 });
    const c = cluster;
    const run = await c.submitRun();
    const started = await c.waitFor(run, 'a pretrain checkpoint', (e) => e.some((x) => x.type === 'CheckpointSaved' && x.data.stage === 'pretrain') && e.find((x) => x.type === 'StageStarted' && x.data.stage === 'pretrain'));
    const rank0Task = started.data.tasks.find((t: any) => t.rank === 0).task_id as string;

    await c.servers[0]!.kill9();
    const killedAt = Date.now();
    // Down for longer than the misses (3 × 1 s): the agents are silent to the database all that time.
    await new Promise((r) => setTimeout(r, DOWN_MS));
    const restarted = await c.startServer([], 0);
    await waitReady(c.url, restarted);
    const upAt = Date.now();

    const events = await c.waitFor(run, 'the run to end', (e) => e.some((x) => ['RunSucceeded', 'RunFailed'].includes(x.type)) && e, 150_000);
    expect(of(events, 'RunSucceeded'), c.tails()).toHaveLength(1);
    expect(await c.ledgerFindings(run)).toEqual([]);

    // Nothing failed: the restarted monitor gave the agents an interval to be heard before judging them.
    for (const type of ['NodeLost', 'TaskHung', 'StageFailed', 'TasksWithdrawn', 'RunResumed']) expect(of(events, type), type).toEqual([]);
    expect(of(events, 'StageStarted').filter((e) => e.data.stage === 'pretrain')).toHaveLength(1);

    // Every report of each task was recorded once, in order, without a gap: what the agents held while the
    // control plane was down was delivered when it came back.
    const seqs = new Map<string, number[]>();
    for (const e of events) if (e.data.task_id && typeof e.data.seq === 'number') seqs.set(e.data.task_id, [...(seqs.get(e.data.task_id) ?? []), e.data.seq]);
    for (const [task, list] of seqs) expect(list, task).toEqual(Array.from({ length: list.length }, (_, i) => list[0]! + i));
    // Rank 0 trained on while the server was down: its reports recorded after the restart include steps it made
    // in the gap (the first one after the restart is the next in sequence to the last before the kill).
    const rank0 = events.filter((e) => e.data.task_id === rank0Task && typeof e.data.seq === 'number');
    const beforeKill = rank0.filter((e) => Date.parse(e.recorded_at) < killedAt);
    const afterUp = rank0.filter((e) => Date.parse(e.recorded_at) >= upAt - 1000);
    expect(beforeKill.length).toBeGreaterThan(0);
    expect(afterUp.length).toBeGreaterThan(0);
    expect(afterUp[0]!.data.seq).toBe(beforeKill.at(-1)!.data.seq + 1);
    const agentsNoticed = [...c.agents.values()].filter((a) => /did not answer/.test(a.output()));
    expect(agentsNoticed.length).toBeGreaterThan(0);
  }, 240_000);
});
