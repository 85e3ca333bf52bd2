import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type Cluster, eventsOfType as of } from './support/cluster.js';

let cluster: Cluster | null = null;
afterEach(async () => {
  await cluster?.stop();
  cluster = null;
});

/** What an agent's task reports become in the ledger (its stop confirmation aside). */
const REPORTS = ['ProgressRecorded', 'CheckpointSaved', 'TaskCompleted', 'TaskFailed'];

describe('chaos: the agent of rank 0 is frozen (SIGSTOP) past the misses, then thawed (SIGCONT)', () => {
  it('is declared lost, the run resumes on the spare, the thawed agent is fenced off its old attempt, its node is recovered, and the run succeeds once', async () => {
    cluster = await startCluster({ nodes: 2, spares: 1, intervalS: 1, timeScale: 16_000 });
    const c = cluster;
    const run = await c.submitRun();
    const started = await c.waitFor(run, 'a pretrain checkpoint', (e) => e.some((x) => x.type === 'CheckpointSaved' && x.data.stage === 'pretrain') && e.find((x) => x.type === 'StageStarted' && x.data.stage === 'pretrain'));
    // Rank 0 reports progress and checkpoints: a frozen rank 0 holds reports of the old attempt that must be refused.
    const victimTask = started.data.tasks.find((t: any) => t.rank === 0);
    const victimId = victimTask.node_id as string;
    const victim = c.agents.get([...c.nodeIds].find(([, id]) => id === victimId)![0])!;
    victim.child.kill('SIGSTOP');
    const frozenAt = Date.now();

    await c.waitFor(run, 'the run to resume without it', (e) => e.some((x) => x.type === 'RunResumed' && x.data.incident?.kind === 'node_lost'));
    victim.child.kill('SIGCONT');
    const thawedAt = Date.now();

    const events = await c.waitFor(run, 'the run to end', (e) => e.some((x) => ['RunSucceeded', 'RunFailed'].includes(x.type)) && e, 150_000);
    expect(of(events, 'RunSucceeded'), c.tails()).toHaveLength(1);
    expect(await c.ledgerFindings(run)).toEqual([]);

    const lost = of(events, 'NodeLost');
    expect(lost).toHaveLength(1);
    expect(lost[0]!.data).toMatchObject({ node_id: victimId, stage: 'pretrain', attempt: 1 });
    expect(Date.parse(lost[0]!.data.detected_at)).toBeGreaterThan(frozenAt - 1000);
    expect(of(events, 'TaskHung')).toEqual([]);
    const resumed = of(events, 'RunResumed').find((e) => e.data.incident?.kind === 'node_lost')!;
    expect(resumed.data.replaced_nodes).toEqual([victimId]);
    expect(resumed.data.spare_nodes).toHaveLength(1);

    // Fenced: after the withdrawal nothing of the old attempt's task on the frozen node was taken but its stop.
    const withdrawn = of(events, 'TasksWithdrawn').find((e) => e.data.attempt === 1 && e.data.task_ids.includes(victimTask.task_id))!;
    const late = events.filter((e) => e.position > withdrawn.position && e.data.task_id === victimTask.task_id);
    expect(late.filter((e) => REPORTS.includes(e.type)).map((e) => e.type)).toEqual([]);
    // The thawed agent did send them, and was refused: its own log says so, for that task, after the thaw.
    const refusal = victim
      .output()
      .split('\n')
      .filter((l) => l.includes('the API refused this task') && l.includes(victimTask.task_id))
      .map((l) => JSON.parse(l) as { time: number; code: string });
    expect(refusal, victim.output().slice(-3000)).toHaveLength(1);
    expect(['invalid_state', 'not_found']).toContain(refusal[0]!.code);
    expect(refusal[0]!.time).toBeGreaterThanOrEqual(thawedAt - 1000);

    // Heard from again after the loss: recorded once, after the thaw.
    const recovered = of(events, 'NodeRecovered');
    expect(recovered.map((e) => e.data.node_id)).toEqual([victimId]);
    expect(recovered[0]!.position).toBeGreaterThan(lost[0]!.position);
  }, 240_000);
});
