import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedger } from '@ito/ledger';
import { ASSIGNMENTS_CHANNEL } from '@ito/runs';
import { createAssignmentNotifier } from '../src/agent/assignment-notifier.js';
import { pollRollouts } from '../src/agent/rollout-service.js';
import type { Resources } from '../src/resources.js';
import { footprint } from '../../../test/support/api.js';
import { postTrainingManifest } from '../../../test/support/manifests.js';
import { registeredNode, seedTenant, startPipeline, submitRun, type Pipeline } from '../../../test/support/pipeline.js';

/** RLVR's trainer ↔ rollout exchange through HTTP, with the test playing both agents. Each run first goes through data prep
 * and planning, which on a loaded machine can take longer than the default test timeout. */
describe('the rollout exchange', () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline('postgres');
  });
  afterAll(async () => p?.close());

  const node = (bookingId: string, name: string) => registeredNode(p.api, bookingId, name);
  const assignmentOf = async (n: Awaited<ReturnType<typeof node>>) => ((await n.call('GET', '/assignments?wait_s=20')).body.data.assignments as any[])[0];
  const sample = (group: number, reward: number) => ({ group, prompt: '12+34=', completion: '46', reward, logprob: -1.5, tokens: 2 });
  const batch = (seq: number, policy_version: number, o: Record<string, unknown> = {}) => ({ attempt: 1, seq, policy_version, samples: [sample(0, 1), sample(0, 0)], ...o });

  it('places trainer and rollout on different nodes, hands over fresh batches and rejects and counts stale ones', async () => {
    const seed = await seedTenant(p.api);
    const [a, b] = [await node(seed.bookingId, 'gpu-01'), await node(seed.bookingId, 'gpu-02')];
    const runId = await submitRun(p.api, seed, postTrainingManifest());
    const [trainer, rollout] = [await assignmentOf(a), await assignmentOf(b)];
    expect(trainer).toMatchObject({ stage: 'rlvr', spec: { rank: 0, role: 'trainer', recipe: { max_policy_staleness: 1 } } });
    expect(rollout).toMatchObject({ stage: 'rlvr', spec: { rank: 1, role: 'rollout' } });
    const prefix = `${trainer.spec.checkpoint.storage}/${runId}/rlvr`;

    // Version 0 (the weights the stage starts from) samples the first batches.
    const first = await b.call('POST', `/tasks/${rollout.task_id}/rollouts`, batch(1, 0, { dropped_groups: 3 }));
    expect(first.body.data).toMatchObject({ duplicate: false, directive: 'continue', policy: { version: 0, uri: null }, trainer_done: false });
    expect((await b.call('POST', `/tasks/${rollout.task_id}/rollouts`, batch(1, 0))).body.data.duplicate).toBe(true);
    await b.call('POST', `/tasks/${rollout.task_id}/rollouts`, batch(2, 0));

    // The trainer publishes versions 1 and 2: batches of version 0 are now 2 behind, over the bound of 1.
    for (const version of [1, 2]) {
      const published = await a.call('POST', `/tasks/${trainer.task_id}/policy`, { attempt: 1, version, uri: `${prefix}/policy-v${version}` });
      expect(published.body.data).toMatchObject({ duplicate: false, policy: { version } });
    }
    const fresh = await b.call('POST', `/tasks/${rollout.task_id}/rollouts`, batch(3, 1));
    expect(fresh.body.data.policy).toEqual({ version: 2, uri: `${prefix}/policy-v2` });

    const poll = await a.call('GET', `/tasks/${trainer.task_id}/rollouts?attempt=1&policy_version=2&wait_s=0`);
    expect(poll.body.data.rejected.map((r: any) => r.staleness)).toEqual([2, 2]);
    expect(poll.body.data.batches.map((x: any) => [x.policy_version, x.staleness, x.samples.length])).toEqual([[1, 1, 2]]);
    // Each batch is handed over once; a long poll is woken by the next batch, not by its timeout.
    const waiting = a.call('GET', `/tasks/${trainer.task_id}/rollouts?attempt=1&policy_version=2&wait_s=20`);
    const started = Date.now();
    await b.call('POST', `/tasks/${rollout.task_id}/rollouts`, batch(4, 2));
    const woken = await waiting;
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(woken.body.data.batches.map((x: any) => x.staleness)).toEqual([0]);

    // Judged batches keep their counts, not their samples.
    const kept = await p.api.pool.query(`select count(*)::int as n from rollout_batches where run_id = $1 and samples <> '[]'::jsonb`, [runId]);
    expect(kept.rows[0].n).toBe(0);

    const metrics = (await p.api.call('GET', `/v1/runs/${runId}/metrics`, { key: seed.requester })).body.data.rollouts;
    expect(metrics).toEqual([
      {
        stage: 'rlvr',
        attempt: 1,
        batches: 4,
        pending: 0,
        accepted: 2,
        rejected: 2,
        dropped_groups: 3,
        policy_version: 2,
        staleness_histogram: { '0': { accepted: 1, rejected: 0 }, '1': { accepted: 1, rejected: 0 }, '2': { accepted: 0, rejected: 2 } },
      },
    ]);
  }, 90_000);

  it('a batch committed between the long poll\'s read and its wait still wakes the trainer at once', async () => {
    const seed = await seedTenant(p.api);
    const [a, b] = [await node(seed.bookingId, 'gpu-01'), await node(seed.bookingId, 'gpu-02')];
    await submitRun(p.api, seed, postTrainingManifest());
    const [trainer, rollout] = [await assignmentOf(a), await assignmentOf(b)];
    // The poll's own notifier and ledger, on the API's database: the ledger's transaction is where the poll reads,
    // and the first one, once its read is done and before the poll can wait, lets a batch commit and its NOTIFY
    // arrive. That is the window a poll that waits after its read loses a batch in.
    const notifier = createAssignmentNotifier(p.api.pool, pino({ level: 'silent' }));
    try {
      for (;;) {
        const probe = notifier.watch('node_probe', 200);
        await p.api.pool.query('select pg_notify($1, $2)', [ASSIGNMENTS_CHANNEL, 'node_probe']);
        const t0 = Date.now();
        await probe.changed;
        if (Date.now() - t0 < 150) break;
      }
      const ledger = createLedger({ pool: p.api.pool });
      let reads = 0;
      const racing = {
        transaction: async <T>(fn: Parameters<typeof ledger.transaction<T>>[0]): Promise<T> => {
          const read = await ledger.transaction(fn);
          if (reads++ === 0) {
            const heard = notifier.watch(a.node_id, 5_000);
            expect((await b.call('POST', `/tasks/${rollout.task_id}/rollouts`, batch(1, 0))).status).toBe(200);
            await heard.changed;
          }
          return read;
        },
      };
      const res = { ledger: racing, assignments: notifier } as unknown as Resources;
      const principal = { kind: 'node' as const, tenantId: seed.tenant.tenant_id, nodeId: a.node_id, bookingId: seed.bookingId };
      const started = Date.now();
      const answer = await pollRollouts(res, principal, trainer.task_id, { attempt: 1, policy_version: 0, wait_s: 6, max: 8 }, new AbortController().signal);
      // Woken by the batch, not by the 6 s deadline; and the batch was read on the poll's second read.
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(reads).toBe(2);
      expect(answer.batches.map((x) => [x.policy_version, x.staleness])).toEqual([[0, 0]]);
    } finally {
      await notifier.close();
    }
  }, 90_000);

  it('refuses what does not follow the protocol, leaving nothing behind', async () => {
    const seed = await seedTenant(p.api);
    const [a, b] = [await node(seed.bookingId, 'gpu-01'), await node(seed.bookingId, 'gpu-02')];
    const runId = await submitRun(p.api, seed, postTrainingManifest());
    const [trainer, rollout] = [await assignmentOf(a), await assignmentOf(b)];
    const prefix = `${trainer.spec.checkpoint.storage}/${runId}/rlvr`;
    const before = await footprint(p.api);
    const rows = async () => (await p.api.pool.query('select (select count(*) from rollout_batches where run_id = $1)::int as b, (select count(*) from rollout_policies where run_id = $1)::int as p', [runId])).rows[0];
    const code = (r: any) => [r.status, r.body.error?.code];

    // A policy the trainer has not published yet, a superseded attempt, the wrong role, another node's task.
    expect(code(await b.call('POST', `/tasks/${rollout.task_id}/rollouts`, batch(1, 1)))).toEqual([400, 'validation_failed']);
    expect(code(await b.call('POST', `/tasks/${rollout.task_id}/rollouts`, batch(1, 0, { attempt: 2 })))).toEqual([409, 'invalid_state']);
    expect(code(await a.call('POST', `/tasks/${trainer.task_id}/rollouts`, batch(1, 0)))).toEqual([409, 'invalid_state']);
    expect(code(await a.call('POST', `/tasks/${rollout.task_id}/rollouts`, batch(1, 0)))).toEqual([404, 'not_found']);
    expect(code(await b.call('POST', `/tasks/${rollout.task_id}/policy`, { attempt: 1, version: 1, uri: `${prefix}/policy-v1` }))).toEqual([409, 'invalid_state']);
    // Hostile shapes: an unknown key, too many samples, a positive log-probability.
    expect(code(await b.call('POST', `/tasks/${rollout.task_id}/rollouts`, { ...batch(1, 0), extra: 1 }))).toEqual([400, 'validation_failed']);
    expect(code(await b.call('POST', `/tasks/${rollout.task_id}/rollouts`, batch(1, 0, { samples: Array.from({ length: 257 }, () => sample(0, 1)) })))).toEqual([400, 'validation_failed']);
    expect(code(await b.call('POST', `/tasks/${rollout.task_id}/rollouts`, batch(1, 0, { samples: [{ ...sample(0, 1), logprob: 1 }] })))).toEqual([400, 'validation_failed']);
    // Policies: weights outside the run's prefix, a version that skips one; the trainer must state its true version.
    expect(code(await a.call('POST', `/tasks/${trainer.task_id}/policy`, { attempt: 1, version: 1, uri: 'file:///etc/passwd' }))).toEqual([400, 'validation_failed']);
    expect(code(await a.call('POST', `/tasks/${trainer.task_id}/policy`, { attempt: 1, version: 2, uri: `${prefix}/policy-v2` }))).toEqual([409, 'invalid_state']);
    expect(code(await a.call('GET', `/tasks/${trainer.task_id}/rollouts?attempt=1&policy_version=5`))).toEqual([409, 'invalid_state']);
    expect(code(await a.call('GET', `/tasks/${trainer.task_id}/rollouts?attempt=1&policy_version=0&max=99`))).toEqual([400, 'validation_failed']);
    expect(await footprint(p.api)).toEqual(before);
    expect(await rows()).toEqual({ b: 0, p: 0 });
  }, 90_000);

  it('on one node, the colocated rank-0 trainer posts its own batches and is handed them, judged and counted the same way', async () => {
    const seed = await seedTenant(p.api, { nodes: 1 });
    const a = await node(seed.bookingId, 'gpu-01');
    const runId = await submitRun(p.api, seed, postTrainingManifest());
    const trainer = await assignmentOf(a);
    expect(trainer).toMatchObject({ stage: 'rlvr', spec: { rank: 0, role: 'trainer', rollout: 'colocated' } });
    const prefix = `${trainer.spec.checkpoint.storage}/${runId}/rlvr`;

    // Sampled with version 0, posted on the rollout route by the trainer itself, then taken by its own poll.
    const posted = await a.call('POST', `/tasks/${trainer.task_id}/rollouts`, batch(1, 0));
    expect(posted.status).toBe(200);
    expect(posted.body.data).toMatchObject({ duplicate: false, policy: { version: 0 }, trainer_done: false });
    const taken = await a.call('GET', `/tasks/${trainer.task_id}/rollouts?attempt=1&policy_version=0&wait_s=0`);
    expect(taken.body.data.batches.map((x: any) => [x.policy_version, x.staleness])).toEqual([[0, 0]]);
    await a.call('POST', `/tasks/${trainer.task_id}/policy`, { attempt: 1, version: 1, uri: `${prefix}/policy-v1` });
    // The staleness bound still holds for a colocated trainer: a batch of a version it has not published is refused.
    const ahead = await a.call('POST', `/tasks/${trainer.task_id}/rollouts`, batch(2, 2));
    expect([ahead.status, ahead.body.error?.code]).toEqual([400, 'validation_failed']);
    await a.call('POST', `/tasks/${trainer.task_id}/rollouts`, batch(3, 1));
    const next = await a.call('GET', `/tasks/${trainer.task_id}/rollouts?attempt=1&policy_version=1&wait_s=0`);
    expect(next.body.data.batches.map((x: any) => [x.policy_version, x.staleness])).toEqual([[1, 0]]);

    const metrics = (await p.api.call('GET', `/v1/runs/${runId}/metrics`, { key: seed.requester })).body.data.rollouts;
    expect(metrics).toMatchObject([{ stage: 'rlvr', attempt: 1, batches: 2, pending: 0, accepted: 2, rejected: 0, policy_version: 1 }]);
  }, 90_000);
});
