import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TrainerConfig } from '../src/executors/trainer-config.js';
import { processExecutor, PYTHON_DIR, runTask, stopMidway } from './support/process.js';
import { makeAssignment, RecordedEvents } from './support/tasks.js';

/** The machine's python3 runs the example trainer, which emits the protocol through ito_trainer_protocol. */
const python = (...args: string[]): TrainerConfig => ({
  trainers: { default: { argv: ['python3', join(PYTHON_DIR, 'example_trainer.py'), ...args], env: { PYTHONDONTWRITEBYTECODE: '1' } } },
});

let dir: string;
let storage: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ito-python-'));
  storage = `file://${dir}/ckpt`;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the Python protocol module through the process executor', () => {
  it('trains: the loss falls and checkpoints are written as files', async () => {
    const executor = processExecutor(dir, python('--checkpoint-every-steps', '50', '--progress-every-steps', '10'));
    const assignment = makeAssignment({ total_steps: 150, checkpoint: { storage } });
    const { outcome, events, stats } = await runTask(executor, assignment);
    expect(outcome).toMatchObject({ kind: 'completed', step: 150 });
    expect(stats.invalid_lines).toBe(0);
    const p = events.progresses;
    expect(p.map((x) => x.step)).toEqual(Array.from({ length: 15 }, (_, i) => (i + 1) * 10));
    expect(p.at(-1)!.loss!).toBeLessThan(p[0]!.loss! * 0.2);
    expect(events.checkpoints.map((c) => c.step)).toEqual([50, 100, 150]);
    for (const c of events.checkpoints) {
      expect(c.uri).toBe(`${storage}/${assignment.run_id}/pretrain/step-${c.step}`);
      const file = c.uri.slice('file://'.length);
      expect(statSync(file).size).toBe(c.bytes);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ format: 'ito.example-checkpoint/v1', step: c.step, run_id: assignment.run_id });
    }
  });

  it('resumes from a checkpoint exactly where it stopped', async () => {
    const executor = processExecutor(dir, python('--checkpoint-every-steps', '50', '--progress-every-steps', '1'));
    const first = makeAssignment({ total_steps: 120, checkpoint: { storage } });
    const a = await runTask(executor, first);
    const at50 = a.events.checkpoints.find((c) => c.step === 50)!;
    const resumed = makeAssignment(
      { ...first.spec, attempt: 2, start_step: 50, resume_from: { checkpoint_id: `ckpt_${'d'.repeat(32)}`, uri: at50.uri, step: 50 } },
      { runId: first.run_id },
    );
    const b = await runTask(executor, resumed);
    expect(b.outcome).toMatchObject({ kind: 'completed', step: 120 });
    expect(b.events.logs).toContain('trainer: resumed at step 50');
    // The restore is reported once, before the first step, with the checkpoint's size as written.
    expect(b.events.restores).toEqual([{ step: 50, bytes: at50.bytes, restore_seconds: expect.any(Number) }]);
    expect(b.events.order.indexOf('restored')).toBeLessThan(b.events.order.indexOf('progress'));
    expect(b.events.progresses[0]!.step).toBe(51);
    const lossOf = (events: RecordedEvents, step: number) => events.progresses.find((x) => x.step === step)!.loss!;
    const meanLoss = (events: RecordedEvents, from: number) => Array.from({ length: 10 }, (_, i) => lossOf(events, from + i)).reduce((s, x) => s + x, 0) / 10;
    expect(meanLoss(b.events, 51)).toBeLessThan(meanLoss(a.events, 1) / 4);
    for (let step = 51; step <= 120; step++) expect(lossOf(b.events, step)).toBe(lossOf(a.events, step));
  });

  it('hears the stop line on its listener thread and saves a final checkpoint', async () => {
    const executor = processExecutor(dir, python('--step-delay-ms', '2', '--progress-every-steps', '5'));
    const { events, outcome } = await stopMidway(executor, makeAssignment({ total_steps: 1_000_000, checkpoint: { storage } }), { checkpoint: true, reason: 'operator' });
    expect(outcome).toMatchObject({ kind: 'stopped', reason: 'operator' });
    expect(events.checkpoints).toEqual([expect.objectContaining({ final: true, step: outcome.step })]);
    expect(existsSync(events.checkpoints[0]!.uri.slice('file://'.length))).toBe(true);
  });

  it('evaluates the metric it really computes, and no other', async () => {
    const executor = processExecutor(dir, python('--progress-every-steps', '50'));
    const training = makeAssignment({ total_steps: 100, checkpoint: { storage } });
    const trained = await runTask(executor, training);
    const end = trained.events.checkpoints.at(-1)!;
    const evalTask = makeAssignment(
      { stage: 'eval_pretrain', total_steps: 0, init_from: { checkpoint_id: `ckpt_${'e'.repeat(32)}`, uri: end.uri, step: 100 }, eval: { battery: 'ito-evals/v1', metrics: ['heldout_loss', 'mmlu'] }, checkpoint: { storage } },
      { runId: training.run_id },
    );
    const { outcome, events } = await runTask(executor, evalTask);
    expect(outcome.kind).toBe('completed');
    if (outcome.kind !== 'completed') return;
    expect(Object.keys(outcome.metrics!)).toEqual(['heldout_loss']);
    expect(outcome.metrics!.heldout_loss).toBeLessThan(1);
    expect(events.logs).toContain('trainer: not computed by this trainer: mmlu');
  });

  it('refuses a task file with a duplicate key, and file URIs with two meanings', async () => {
    const task = join(dir, 'task.json');
    await writeFile(task, '{"spec":{"a":1},"spec":{"b":2}}');
    const check = (code: string) => spawnSync('python3', ['-c', code], { cwd: PYTHON_DIR, env: { PATH: process.env.PATH, PYTHONDONTWRITEBYTECODE: '1' }, encoding: 'utf8' });
    const dup = check(`import ito_trainer_protocol as p\ntry:\n  p.load_task(["--task", ${JSON.stringify(task)}], listen=False)\nexcept ValueError as e:\n  print(e)`);
    expect(dup.stdout.trim()).toBe('duplicate key in JSON');
    const uris = ['file://host/x', 'file://relative', 'file:///a/../b', 'file:///a//b', 'file:///a%2fb', 'file:///a/'];
    const refused = check(`import ito_trainer_protocol as p\nfor u in ${JSON.stringify(uris)}:\n  try:\n    p.file_path(u); print("accepted")\n  except ValueError:\n    print("refused")\nprint(p.file_path("file:///var/ckpt/step-1"))`);
    expect(refused.stdout.trim().split('\n')).toEqual([...uris.map(() => 'refused'), '/var/ckpt/step-1']);
  });

  it('speaks RLVR through the module: a poll and a publish are relayed, and their answers come back on stdin', async () => {
    const script = join(dir, 'rlvr_trainer.py');
    await writeFile(
      script,
      [
        'import sys',
        `sys.path.insert(0, ${JSON.stringify(PYTHON_DIR)})`,
        'import ito_trainer_protocol as ito',
        'task = ito.load_task()',
        'got = ito.want_batches(0, wait_s=0, max_batches=1)',
        'ito.log("batches %d rejected %d reward %s" % (len(got["batches"]), len(got["rejected"]), got["batches"][0]["samples"][0]["reward"]))',
        'uri = ito.checkpoint_uri(task["spec"], 1).replace("step-1", "policy-v1")',
        'ito.log("published %d" % ito.publish_policy(1, uri)["version"])',
        'try:',
        '    ito.publish_policy(2, "file:///etc/elsewhere")',
        'except RuntimeError as err:',
        '    ito.log(str(err))',
      ].join('\n'),
    );
    const executor = processExecutor(dir, { trainers: { default: { argv: ['python3', script], env: { PYTHONDONTWRITEBYTECODE: '1' } } } });
    const published: number[] = [];
    const sample = { group: 0, prompt: '1+2=', completion: '0003', reward: 1, logprob: -0.5, tokens: 4 };
    const events = Object.assign(new RecordedEvents(), {
      exchange: {
        postBatch: async () => ({ policy: { version: 0, uri: null }, trainer_done: false }),
        publishPolicy: async (p: { version: number }) => void published.push(p.version),
        pollBatches: async () => ({ batches: [{ batch_id: `rbt_${'a'.repeat(32)}`, policy_version: 0, staleness: 0, samples: [sample], dropped_groups: 0 }], rejected: [{ batch_id: `rbt_${'b'.repeat(32)}`, policy_version: 0, staleness: 3 }] }),
      },
    });
    const assignment = makeAssignment({ stage: 'rlvr', total_steps: 1, checkpoint: { storage }, recipe: { max_policy_staleness: 1 } });
    const outcome = await executor.start(assignment, events).done;
    expect(outcome.kind).toBe('completed');
    expect(events.logs).toContain('trainer: batches 1 rejected 1 reward 1');
    expect(events.logs).toContain('trainer: published 1');
    // A policy outside the run's storage is never relayed: the module hears it refused.
    expect(events.logs).toContain('trainer: the control plane refused the exchange (validation_failed)');
    expect(published).toEqual([1]);
  });
});
