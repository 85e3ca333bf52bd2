import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { S3StorageDriver } from '@ito/storage';
import { runCli } from '../../apps/cli/test/support/cli.js';
import type { Planted } from '../fixtures/dataprep/generator.js';
import { smallManifest } from '../support/manifests.js';
import { startS3Server, S3_TEST_CREDENTIALS, type TestS3Server } from '../support/s3-server.js';
import { startCluster, type Cluster, eventsOfType as of } from './support/cluster.js';
import { ROOT } from './support/processes.js';

/**
 * Real PyTorch across nodes through the agents, with the run's data and checkpoints on a real S3-compatible store
 * (s3rver on loopback). Data prep reads the corpus from the bucket and counts its planted duplicates and leaks;
 * two `ito-agent` processes run pretrain as a 2-process DistributedDataParallel job (examples/trainers/torch_lm.py,
 * gloo), rank 0's agent offering the rendezvous; each checkpoint the trainer writes to its task directory is
 * uploaded by its agent, with the agent's own store credentials (the trainer has none). One node is killed (agent
 * and trainer, SIGKILL) mid-stage; the monitor declares it lost, the run re-plans onto the node left, whose agent
 * downloads the checkpoint the other node's agent uploaded; the trainer restores it and goes on, the evaluation
 * scores the last checkpoint (downloaded too), and the run succeeds. Cleanup leaves nothing under the run's prefix,
 * and `ito audit verify` passes.
 */
const PYTHON = '/usr/bin/python3';
const hasTorch = spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;
const fixtures = join(ROOT, 'test/fixtures/dataprep');
const corpus = readFileSync(join(fixtures, 'corpus.jsonl'), 'utf8');
const truth = JSON.parse(readFileSync(join(fixtures, 'corpus.truth.json'), 'utf8')) as Planted[];
const planted = (kind: Planted['kind']) => truth.filter((t) => t.kind === kind).length;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const REPORT = '{"checked":"ito-evals/v1"}\n';
const STORAGE = 's3://ito-runs/ckpt/';

let cluster: Cluster | null = null;
let s3: TestS3Server | null = null;
let store: S3StorageDriver | null = null;
let dir = '';
afterEach(async () => {
  await cluster?.stop();
  cluster = null;
  store?.close();
  await s3?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!hasTorch && !process.env.CI)('chaos: PyTorch DDP across two agents on s3:// storage, one node killed mid-stage', () => {
  it('prepares the data from the bucket, resumes on the node left from the checkpoint the other uploaded, succeeds, and cleans up', async () => {
    if (!hasTorch) throw new Error(`no PyTorch for ${PYTHON}: CI installs it (apt-get install -y --no-install-recommends python3-torch)`);
    dir = mkdtempSync(join(tmpdir(), 'ito-torch-chaos-'));
    s3 = await startS3Server(['ito-runs']);
    store = new S3StorageDriver(s3.options());
    await store.write('s3://ito-runs/datasets/corpus.jsonl', Buffer.from(corpus));
    await store.write('s3://ito-runs/datasets/corpus.decontamination.json', Buffer.from(REPORT));
    // The store's settings and credentials, in the environment of the processes that use it: never the manifest's.
    const s3Env = {
      ITO_S3_ENDPOINT: s3.endpoint,
      ITO_S3_PATH_STYLE: '1',
      ITO_S3_ACCESS_KEY_ID: S3_TEST_CREDENTIALS.accessKeyId,
      ITO_S3_SECRET_ACCESS_KEY: S3_TEST_CREDENTIALS.secretAccessKey,
    };
    const trainers = join(dir, 'trainers.json');
    const argv = [PYTHON, join(ROOT, 'examples/trainers/torch_lm.py'), '--checkpoint-every-steps', '20', '--progress-every-steps', '10', '--step-delay-ms', '20'];
    writeFileSync(trainers, JSON.stringify({ trainers: { default: { argv, env: { PYTHONDONTWRITEBYTECODE: '1', OMP_NUM_THREADS: '1' } } } }));
    const ports: Record<string, number> = { 'gpu-01': 29_611 + (process.pid % 200), 'gpu-02': 29_811 + (process.pid % 200) };
    cluster = await startCluster({
      nodes: 2,
      intervalS: 1,
      timeScale: 1,
      // A real store: the confirmation probes it, data prep reads from it, cleanup sweeps it.
      serverEnv: { ...s3Env, ITO_STORAGE_SIMULATED_SCHEMES: '', ITO_EVAL_BATTERY_DIR: join(ROOT, 'test/fixtures/evals') },
      agentEnv: () => ({ ...s3Env, ITO_LOG_LEVEL: 'debug' }),
      manifest: smallManifest((m) => {
        m.target.tokens = 1_000_000_000;
        m.checkpoint.storage = STORAGE;
        m.data = [
          {
            ...m.data[0],
            ref: 's3://ito-runs/datasets/corpus.jsonl',
            sha256: sha256(corpus),
            decontamination: { ...m.data[0].decontamination, report_ref: 's3://ito-runs/datasets/corpus.decontamination.json', report_sha256: sha256(REPORT), contaminated_fraction: planted('leak') / truth.length },
          },
        ];
      }),
      setup: async (admin, tenantId) => {
        await admin(['tenant', 'policy', 'set', '--tenant', tenantId, '--storage-schemes', 's3', '--storage-prefixes', STORAGE, '--max-contaminated-fraction', '0.1']);
      },
      agentArgs: (name) => [
        '--executor', 'process', '--trainer-config', trainers, '--work-dir', join(dir, 'work', name), '--progress-interval-ms', '500',
        '--rendezvous-addr', '127.0.0.1', '--rendezvous-port', String(ports[name]),
      ],
    });
    const c = cluster;
    const run = await c.submitRun();
    const started = await c.waitFor(
      run,
      'a pretrain checkpoint of the 2-node attempt',
      (e) => e.some((x) => x.type === 'CheckpointSaved' && x.data.stage === 'pretrain' && x.data.attempt === 1) && e.find((x) => x.type === 'StageStarted' && x.data.stage === 'pretrain'),
      180_000,
    );
    expect(started.data.tasks).toHaveLength(2);
    const rank0 = started.data.tasks.find((t: any) => t.rank === 0).node_id as string;
    const rank0Name = [...c.nodeIds].find(([, id]) => id === rank0)![0];
    expect(started.data.spec.rendezvous).toEqual({ master_addr: '127.0.0.1', master_port: ports[rank0Name] });
    // The node of rank 0 goes, the one whose agent uploaded the checkpoints: its agent and its trainer (a trainer
    // runs in its own process group). The node left has only what the store holds.
    const victim = rank0Name;
    const agent = c.agents.get(victim)!;
    const trainerPids = spawnSync('pgrep', ['-P', String(agent.child.pid)], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    await agent.kill9();
    for (const pid of trainerPids) spawnSync('kill', ['-9', pid]);

    const events = await c.waitFor(run, 'the run to end', (e) => e.some((x) => ['RunSucceeded', 'RunFailed'].includes(x.type)) && e, 300_000);
    const story = events.map((e) => `${e.type}${e.data.attempt ? `@${e.data.attempt}` : ''}${e.data.reason ? ` (${e.data.reason})` : ''}`).join(', ');
    expect(of(events, 'RunSucceeded'), `${story}\n${c.tails()}`).toHaveLength(1);
    expect(await c.ledgerFindings(run)).toEqual([]);

    // Data prep read the corpus from the bucket and found what was planted in it.
    expect(of(events, 'DataPrepared')[0]!.data).toMatchObject({
      docs_in: truth.length,
      removed: { exact: planted('exact'), near: planted('near'), decontamination: planted('leak') },
      output_ref: `${STORAGE}${run}/data/0/corpus.jsonl`,
    });

    // The last resume is on the node left: one rank, no rendezvous, from a checkpoint rank 0's agent uploaded.
    const resumed = of(events, 'RunResumed', 'pretrain').at(-1)!;
    const victimId = c.nodeIds.get(victim)!;
    const survivor = [...c.nodeIds].find(([name]) => name !== victim)!;
    expect(of(events, 'NodeLost').map((e) => e.data.node_id)).toEqual([victimId]);
    expect(resumed, c.tails()).toBeDefined();
    const retry = events.find((e) => e.type === 'StageStarted' && e.data.stage === 'pretrain' && e.data.attempt === resumed.data.attempt)!;
    expect(retry.data.tasks.map((t: any) => t.node_id)).toEqual([survivor[1]]);
    expect(retry.data.spec.world_size).toBe(1);
    expect(retry.data.spec.rendezvous).toBeNull();
    const saved = of(events, 'CheckpointSaved');
    const from = saved.find((e) => e.data.checkpoint_id === resumed.data.from_checkpoint_id)!;
    expect(started.data.tasks.find((t: any) => t.task_id === from.data.task_id).node_id).toBe(victimId);
    expect(from.data.uri).toBe(`${STORAGE}${run}/pretrain/step-${from.data.step}`);
    expect(c.agents.get(survivor[0])!.output()).toContain(`downloaded the checkpoint to resume from (step ${from.data.step})`);
    // It trains on the data prep kept for the run, which its agent brought down from the bucket, not a synthetic text.
    expect(c.agents.get(survivor[0])!.output()).toMatch(/downloaded 1 shard\(s\) of the run's prepared data/);
    expect(c.agents.get(survivor[0])!.output()).toMatch(/training on \d+ bytes of prepared text/);

    // The step after the resume is the checkpoint's step + 1, the loss within 10 % of the loss there.
    const progress = of(events, 'ProgressRecorded', 'pretrain');
    const atCheckpoint = progress.find((e) => e.data.attempt === from.data.attempt && e.data.step === from.data.step)!;
    const afterResume = progress.filter((e) => e.data.attempt === resumed.data.attempt).sort((a, b) => a.data.step - b.data.step)[0]!;
    expect(afterResume.data.step).toBe(from.data.step + 1);
    expect(Math.abs(afterResume.data.loss - atCheckpoint.data.loss) / atCheckpoint.data.loss).toBeLessThan(0.1);
    expect(of(events, 'CheckpointRestored', 'pretrain').some((e) => e.data.step === from.data.step)).toBe(true);
    expect(progress.at(-1)!.data.loss).toBeLessThan(progress[0]!.data.loss * 0.8);

    // Every checkpoint reported was in the store (the agent uploaded it before reporting): those keep_last kept are
    // there with the bytes reported, the older ones existed when keep_last removed them.
    const prefix = `${STORAGE}${run}/`;
    const objects = await store.listObjects(prefix);
    const pruned = new Map(of(events, 'CheckpointDeleted').map((e) => [e.data.checkpoint_id, e.data]));
    for (const e of saved) {
      if (pruned.has(e.data.checkpoint_id)) expect(pruned.get(e.data.checkpoint_id)).toMatchObject({ reason: 'keep_last', existed: true });
      else expect(objects).toContainEqual({ uri: e.data.uri, bytes: e.data.bytes });
    }

    // Cleanup removes everything the run wrote under its prefix, and says what.
    const confirm = await c.call('POST', '/v1/confirmations', { action: 'run.cleanup', run_id: run });
    await c.call('POST', `/v1/confirmations/${confirm.body.data.confirmation_ref}/approve`, undefined, c.tenant.approver_key);
    const cleanup = await c.call('POST', `/v1/runs/${run}/cleanup`, { confirmation_ref: confirm.body.data.confirmation_ref }, c.tenant.requester_key, { 'idempotency-key': `cleanup-${run}` });
    expect(cleanup.body.data?.state, JSON.stringify(cleanup.body)).toBe('cleaning_up');
    const cleaned = await c.waitFor(run, 'cleanup', (e) => e.find((x) => x.type === 'CleanupCompleted'), 60_000);
    expect(await store.list(prefix)).toEqual([]);
    expect(cleaned.data.storage).toMatchObject({ prefix, objects: objects.length, bytes: objects.reduce((sum, o) => sum + o.bytes, 0) });

    // The tenant's auditor recomputes the hash chain through the API.
    const auditor = await runCli(['key', 'create', '--tenant', c.tenant.tenant_id, '--scopes', 'audit:read', '--json'], {
      entry: join(ROOT, 'apps/cli/dist/ito-admin.js'),
      env: { ITO_DATABASE_URL: c.db.url, ITO_HOME: join(dir, 'admin') },
    });
    const verify = await runCli(['audit', 'verify', '--json'], { env: { ITO_API_URL: c.url, ITO_API_KEY: auditor.json().data.key, ITO_HOME: join(dir, 'auditor') } });
    expect(verify.json(), verify.stderr).toMatchObject({ ok: true, data: { verified: true } });
  }, 480_000);
});
