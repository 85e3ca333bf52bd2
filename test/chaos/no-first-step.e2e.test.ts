import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../apps/cli/test/support/cli.js';
import { EXAMPLE_MANIFEST } from '../support/api.js';
import { startCluster, type Cluster, eventsOfType as of } from './support/cluster.js';

let cluster: Cluster | null = null;
afterEach(async () => {
  await cluster?.stop();
  cluster = null;
});

/**
 * The operator's bound on the start-up allowance: it decides here, since the plan expects minutes of real start-up
 * (far more than a simulated clock needs), and it stays above the misses (3 × 1 s) so a sampling gap never counts.
 * The first scenario waits longer, so that `ito status` (a process started on a loaded machine) asks in time.
 */
const ALLOWANCE_S = 8;
const SHORT_ALLOWANCE_S = 4;
const firstStep = (s: number) => `no first step within ${s} s`;

/**
 * The example manifest trimmed to a short pretrain and its gate (loosened for the fewer tokens): the stage the
 * scenarios break, and nothing after it.
 */
const PRETRAIN_ONLY = (() => {
  const m = JSON.parse(EXAMPLE_MANIFEST);
  m.target.curriculum = ['pretrain'];
  m.target.tokens = 8_000_000_000;
  m.eval.gates = { pretrain: { heldout_loss: { max: 10 } } };
  return `${JSON.stringify(m, null, 2)}\n`;
})();

/** One node, a fast clock, the allowance bounded, and the trainer of pretrain's given attempts stuck before its first step. */
const startStuckCluster = (attempts: number[], allowanceS: number) =>
  startCluster({
    nodes: 1,
    intervalS: 1,
    timeScale: 100_000,
    manifest: PRETRAIN_ONLY,
    serverEnv: { ITO_FIRST_STEP_MAX_S: String(allowanceS) },
    // `hang` at step 0: the trainer starts (its node keeps beating) and never reaches a step, like one stuck loading data.
    agentEnv: () => ({ ITO_SIM_FAULTS: attempts.map((a) => `hang@step=0,stage=pretrain,attempt=${a}`).join(';') }),
  });

describe('chaos: a trainer that never reaches its first step', () => {
  it('is declared hung once its start-up allowance is over, status says what the stage waits for meanwhile, and the retried attempt succeeds', async () => {
    cluster = await startStuckCluster([1], ALLOWANCE_S);
    const c = cluster;
    const run = await c.submitRun();
    const started = await c.waitFor(run, 'pretrain to start', (e) => e.find((x) => x.type === 'StageStarted' && x.data.stage === 'pretrain'));
    const nodeId = started.data.tasks[0].node_id as string;

    // While it waits, `ito status` says for what, on which node, and for how long at most.
    const status = await runCli(['status', run], { env: { ITO_API_URL: c.url, ITO_API_KEY: c.tenant.requester_key, ITO_HOME: join(c.dir, 'cli') } });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`waiting_for\\s+first step on node gpu-01 \\(allowance ${ALLOWANCE_S} s, \\d+ s so far\\)`));

    const events = await c.waitFor(run, 'the run to end', (e) => e.some((x) => ['RunSucceeded', 'RunFailed'].includes(x.type)) && e, 60_000);
    expect(of(events, 'RunSucceeded'), c.tails()).toHaveLength(1);
    expect(await c.ledgerFindings(run)).toEqual([]);

    expect(of(events, 'NodeLost')).toEqual([]);
    const hung = of(events, 'TaskHung');
    expect(hung).toHaveLength(1);
    expect(hung[0]!.data).toMatchObject({ node_id: nodeId, stage: 'pretrain', attempt: 1, first_step_allowance_s: ALLOWANCE_S, evidence: firstStep(ALLOWANCE_S) });
    expect(hung[0]!.data).not.toHaveProperty('step');
    // Judged from the task's assignment: past the allowance, and seen within a few intervals of it.
    const waited = (Date.parse(hung[0]!.data.detected_at) - Date.parse(hung[0]!.data.last_progress_at)) / 1000;
    expect(waited).toBeGreaterThan(ALLOWANCE_S);
    expect(waited).toBeLessThan(ALLOWANCE_S + 3 * c.intervalS);
    const failed = of(events, 'StageFailed');
    expect(failed.map((e) => [e.data.stage, e.data.attempt, e.data.failure])).toEqual([['pretrain', 1, 'hang']]);
    expect(failed[0]!.data.reason).toContain(firstStep(ALLOWANCE_S));

    // Recovered by the rules of any hang: the one node, a suspect, is the only one left, and attempt 2 trains.
    const resumed = of(events, 'RunResumed').find((e) => e.data.incident?.kind === 'hang')!;
    expect(resumed.data).toMatchObject({ stage: 'pretrain', attempt: 2, nodes: [nodeId] });
    expect(of(events, 'TaskCompleted', 'pretrain').map((e) => e.data.attempt)).toEqual([2]);
  }, 120_000);

  it('fails the run with that reason when every attempt is stuck the same way', async () => {
    cluster = await startStuckCluster([1, 2, 3], SHORT_ALLOWANCE_S);
    const c = cluster;
    const run = await c.submitRun();
    const events = await c.waitFor(run, 'the run to end', (e) => e.some((x) => ['RunSucceeded', 'RunFailed'].includes(x.type)) && e, 90_000);
    expect(await c.ledgerFindings(run, { event: 'RunFailed', state: 'failed' })).toEqual([]);

    expect(of(events, 'TaskHung').map((e) => [e.data.attempt, e.data.evidence])).toEqual([1, 2, 3].map((a) => [a, firstStep(SHORT_ALLOWANCE_S)]));
    const end = of(events, 'RunFailed')[0]!;
    expect(end.data.reason).toMatch(new RegExp(`^stage pretrain failed 3 times; the last attempt: task tsk_\\w+ hung on node node_\\w+: ${firstStep(SHORT_ALLOWANCE_S)} of its start \\(start-up allowance\\)$`));
    const shown = (await c.call('GET', `/v1/runs/${run}`)).body.data;
    expect(shown).toMatchObject({ state: 'failed', waiting_for: null, failure: { reason: end.data.reason } });
  }, 120_000);
});
