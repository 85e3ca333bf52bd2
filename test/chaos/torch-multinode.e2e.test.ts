import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { smallManifest } from '../support/manifests.js';
import { startCluster, type Cluster, eventsOfType as of } from './support/cluster.js';
import { ROOT } from './support/processes.js';

/**
 * Real PyTorch across nodes through the agents: two `ito-agent` processes on loopback run pretrain as a 2-process
 * DistributedDataParallel job (examples/trainers/torch_lm.py, gloo), rank 0's agent offering the rendezvous. One
 * node is killed (agent and trainer, SIGKILL) mid-stage; the monitor declares it lost, the run re-plans onto the
 * node left, the trainer restores the last checkpoint and goes on, and the run succeeds with a whole ledger.
 */
const PYTHON = '/usr/bin/python3';
const hasTorch = spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;

let cluster: Cluster | null = null;
let dir = '';
afterEach(async () => {
  await cluster?.stop();
  cluster = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!hasTorch && !process.env.CI)('chaos: PyTorch DDP across two agents, one node killed mid-stage', () => {
  it('resumes on the node left from the last checkpoint (step + 1, the loss within 10 %) and succeeds', async () => {
    if (!hasTorch) throw new Error(`no PyTorch for ${PYTHON}: CI installs it (apt-get install -y --no-install-recommends python3-torch)`);
    dir = mkdtempSync(join(tmpdir(), 'ito-torch-chaos-'));
    const trainers = join(dir, 'trainers.json');
    const argv = [PYTHON, join(ROOT, 'examples/trainers/torch_lm.py'), '--checkpoint-every-steps', '40', '--progress-every-steps', '10', '--step-delay-ms', '25'];
    writeFileSync(trainers, JSON.stringify({ trainers: { default: { argv, env: { PYTHONDONTWRITEBYTECODE: '1', OMP_NUM_THREADS: '1' } } } }));
    const storage = join(dir, 'ckpt');
    const ports: Record<string, number> = { 'gpu-01': 29_611 + (process.pid % 200), 'gpu-02': 29_811 + (process.pid % 200) };
    cluster = await startCluster({
      nodes: 2,
      intervalS: 1,
      timeScale: 1,
      manifest: smallManifest((m) => {
        m.checkpoint.storage = `file://${storage}/`;
      }),
      setup: async (admin, tenantId) => {
        await admin(['tenant', 'policy', 'set', '--tenant', tenantId, '--file-roots', dir, '--storage-schemes', 'file,s3,gs,az']);
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
    // The node of rank 1 goes: its agent and its trainer (a trainer runs in its own process group).
    const victimId = started.data.tasks.find((t: any) => t.rank === 1).node_id as string;
    const victim = [...c.nodeIds].find(([, id]) => id === victimId)![0];
    const agent = c.agents.get(victim)!;
    const trainerPids = spawnSync('pgrep', ['-P', String(agent.child.pid)], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    await agent.kill9();
    for (const pid of trainerPids) spawnSync('kill', ['-9', pid]);

    const events = await c.waitFor(run, 'the run to end', (e) => e.some((x) => ['RunSucceeded', 'RunFailed'].includes(x.type)) && e, 300_000);
    const story = events.map((e) => `${e.type}${e.data.attempt ? `@${e.data.attempt}` : ''}${e.data.reason ? ` (${e.data.reason})` : ''}`).join(', ');
    expect(of(events, 'RunSucceeded'), `${story}\n${c.tails()}`).toHaveLength(1);
    expect(await c.ledgerFindings(run)).toEqual([]);

    // Re-planned onto the node left: the resumed attempt is one rank, with no rendezvous to meet at.
    const resumed = of(events, 'RunResumed').find((e) => e.data.stage === 'pretrain')!;
    expect(resumed, c.tails()).toBeDefined();
    const retry = events.find((e) => e.type === 'StageStarted' && e.data.stage === 'pretrain' && e.data.attempt === resumed.data.attempt)!;
    expect(retry.data.tasks.map((t: any) => t.node_id)).toEqual([rank0]);
    expect(retry.data.spec.world_size).toBe(1);
    expect(retry.data.spec.rendezvous).toBeNull();

    // The checkpoint it resumed from, and the step after it: its step + 1, the loss within 10 % of the loss there.
    const from = of(events, 'CheckpointSaved', 'pretrain').find((e) => e.data.checkpoint_id === resumed.data.from_checkpoint_id)!;
    const progress = of(events, 'ProgressRecorded', 'pretrain');
    const atCheckpoint = progress.find((e) => e.data.attempt === from.data.attempt && e.data.step === from.data.step)!;
    const afterResume = progress.filter((e) => e.data.attempt === resumed.data.attempt).sort((a, b) => a.data.step - b.data.step)[0]!;
    expect(afterResume.data.step).toBe(from.data.step + 1);
    expect(Math.abs(afterResume.data.loss - atCheckpoint.data.loss) / atCheckpoint.data.loss).toBeLessThan(0.1);
    expect(of(events, 'CheckpointRestored', 'pretrain').some((e) => e.data.step === from.data.step)).toBe(true);
    // The loss fell over the stage.
    expect(progress.at(-1)!.data.loss).toBeLessThan(progress[0]!.data.loss * 0.8);
  }, 480_000);
});
