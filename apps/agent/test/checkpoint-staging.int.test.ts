import { createHash } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FileStorageDriver, S3StorageDriver, StorageRegistry, type S3StorageOptions } from '@ito/storage';
import { startS3Server, type TestS3Server } from '../../../test/support/s3-server.js';
import { localPath } from '../src/executors/checkpoint-staging.js';
import { fixtureTrainer, processExecutor, runTask } from './support/process.js';
import { makeAssignment } from './support/tasks.js';

/**
 * The agent moves checkpoints (docs/trainer-protocol.md, "checkpoint_file"): a trainer writes a file in its task
 * directory, the agent uploads it to the run's storage on a real S3-compatible server (s3rver, loopback) and only
 * then reports it; before a resumed task starts, the agent downloads its checkpoint into that directory.
 */
const MiB = 1024 * 1024;
const STORAGE = 's3://ito-ckpt/runs/';
const PLANTED = 'planted-outside-secret-4f1d';

let s3: TestS3Server;
let store: S3StorageDriver;
let dir: string;

/** The agent's registry: its own S3 settings and credentials, never the task's. */
const registry = (extra: Partial<S3StorageOptions> = {}) => new StorageRegistry([new FileStorageDriver(), new S3StorageDriver(s3.options(extra))]);
const trainer = (...args: string[]) => fixtureTrainer('checkpoint-file-trainer.mjs', args);
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  s3 = await startS3Server(['ito-ckpt']);
  store = new S3StorageDriver(s3.options());
}, 30_000);
afterAll(async () => {
  store?.close();
  await s3?.stop();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ito-staging-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the agent uploads the checkpoint files a trainer writes, and downloads the one it resumes from', () => {
  it('uploads each file to s3://, reports it only once uploaded with the bytes the store holds, and leaves no file on the node', async () => {
    const executor = processExecutor(dir, trainer(`10:${3 * MiB}`, '20:1000'), { storage: registry() });
    const assignment = makeAssignment({ total_steps: 21, checkpoint: { storage: STORAGE } });
    const { outcome, events, stats } = await runTask(executor, assignment);
    expect(outcome, events.logs.join('\n')).toMatchObject({ kind: 'completed', step: 21 });
    expect(stats.invalid_lines, events.logs.join('\n')).toBe(0);
    const prefix = `${STORAGE}${assignment.run_id}/pretrain/`;
    expect(events.checkpoints).toEqual([
      { step: 10, uri: `${prefix}step-10`, bytes: 3 * MiB, save_seconds: expect.any(Number), async: true, elapsed_s: expect.any(Number) },
      { step: 20, uri: `${prefix}step-20`, bytes: 1000, save_seconds: expect.any(Number), async: true, elapsed_s: expect.any(Number) },
    ]);
    // The save took the trainer's write and then the upload.
    for (const c of events.checkpoints) expect(c.save_seconds).toBeGreaterThan(0.25);
    expect((await store.read(`${prefix}step-10`)).equals(Buffer.alloc(3 * MiB, 10))).toBe(true);
    expect(await store.listObjects(`${STORAGE}${assignment.run_id}/`)).toEqual([
      { uri: `${prefix}step-10`, bytes: 3 * MiB },
      { uri: `${prefix}step-20`, bytes: 1000 },
    ]);
    // The task directory (and the files in it) went with the task.
    expect(readdirSync(join(dir, 'work'))).toEqual([]);
  }, 30_000);

  it('downloads resume_from and init_from (saved by another node) into the task directory before the trainer starts', async () => {
    const run = makeAssignment({ checkpoint: { storage: STORAGE } });
    const saved = Buffer.alloc(2 * MiB + 3, 7);
    const earlier = Buffer.from('weights of the stage before');
    const at = (stage: string, step: number) => `${STORAGE}${run.run_id}/${stage}/step-${step}`;
    await store.write(at('pretrain', 30), saved);
    await store.write(at('mid_train', 0), earlier);
    const resumed = makeAssignment(
      {
        attempt: 2,
        start_step: 30,
        total_steps: 31,
        checkpoint: { storage: STORAGE },
        resume_from: { checkpoint_id: `ckpt_${'a'.repeat(32)}`, uri: at('pretrain', 30), step: 30 },
        init_from: { checkpoint_id: `ckpt_${'b'.repeat(32)}`, uri: at('mid_train', 0), step: 0 },
      },
      { runId: run.run_id },
    );
    const { outcome, events } = await runTask(processExecutor(dir, trainer(), { storage: registry() }), resumed);
    expect(outcome, events.logs.join('\n')).toMatchObject({ kind: 'completed' });
    expect(events.logs).toContain(`trainer: resume file inside the task directory: true, sha256 ${sha256(saved)}`);
    expect(events.logs).toContain(`trainer: init file inside the task directory: true, sha256 ${sha256(earlier)}`);
    // The restore counts the agent's download as well as the trainer's own 0.5 s.
    expect(events.restores).toEqual([{ step: 30, bytes: saved.length, restore_seconds: expect.any(Number) }]);
    expect(events.restores[0]!.restore_seconds).toBeGreaterThan(0.5);
    expect(readdirSync(join(dir, 'work'))).toEqual([]);
  }, 30_000);

  it('fails a task whose checkpoint to resume from cannot be downloaded, before its trainer starts', async () => {
    const marker = join(dir, 'started');
    const executor = processExecutor(dir, { trainers: { default: { argv: [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, '')`] } } }, { storage: registry() });
    const base = makeAssignment({ checkpoint: { storage: STORAGE } });
    const missing = `${STORAGE}${base.run_id}/pretrain/step-40`;
    const resumed = makeAssignment({ attempt: 2, start_step: 40, checkpoint: { storage: STORAGE }, resume_from: { checkpoint_id: `ckpt_${'c'.repeat(32)}`, uri: missing, step: 40 } }, { runId: base.run_id });
    const { outcome } = await runTask(executor, resumed);
    expect(outcome).toMatchObject({ kind: 'failed', failure: 'error', reason: 'the checkpoint to resume from (step 40) could not be downloaded: no object at that storage URI' });
    expect(existsSync(marker)).toBe(false);
    expect(readdirSync(join(dir, 'work'))).toEqual([]);
  }, 30_000);

  it('reports nothing of a checkpoint whose upload the store broke off, leaves no object, and fails the task whose last checkpoint was lost', async () => {
    // The store dies once the upload of the 12 MiB checkpoint is under way (its first part sent): a real kill -9
    // of the S3 server, timed by the driver's own read of the file.
    class DyingStore extends S3StorageDriver {
      override writeStream(uri: string, source: AsyncIterable<Uint8Array>) {
        async function* killedMidway() {
          let sent = 0;
          for await (const chunk of source) {
            if (sent >= 6 * MiB) await s3.kill();
            sent += chunk.byteLength;
            yield chunk;
          }
        }
        return super.writeStream(uri, uri.endsWith('/step-20') ? killedMidway() : source);
      }
    }
    const dying = new DyingStore(s3.options({ requestTimeoutMs: 3_000, maxAttempts: 1, partSizeBytes: 5 * MiB }));
    const executor = processExecutor(dir, trainer('10:1000', `20:${12 * MiB}`), { storage: new StorageRegistry([new FileStorageDriver(), dying]) });
    const assignment = makeAssignment({ total_steps: 21, checkpoint: { storage: STORAGE } });
    try {
      const { outcome, events } = await runTask(executor, assignment);
      expect(events.checkpoints.map((c) => c.step)).toEqual([10]);
      expect(events.logs.some((l) => l.startsWith('checkpoint at step 20 not uploaded, so not reported: s3 storage write failed'))).toBe(true);
      expect(outcome).toMatchObject({ kind: 'failed', failure: 'error', reason: 'the last checkpoint could not be uploaded to the run’s storage', step: 21 });
    } finally {
      dying.close();
      await s3.restart();
    }
    const prefix = `${STORAGE}${assignment.run_id}/`;
    expect(await store.list(prefix)).toEqual([`${prefix}pretrain/step-10`]);
    expect(await store.exists(`${prefix}pretrain/step-20`)).toBe(false);
    // The server's own files hold no object for it either (a part it took before it died is not an object).
    expect(JSON.stringify(await readdir(s3.directory, { recursive: true }))).not.toContain(`${assignment.run_id}/pretrain/step-20`);
    expect(readdirSync(join(dir, 'work'))).toEqual([]);
  }, 60_000);

  it('refuses a checkpoint file outside the task directory, through a symlink, or past its bound, and uploads none of them', async () => {
    const outside = join(dir, 'outside');
    writeFileSync(outside, PLANTED);
    const executor = processExecutor(
      dir,
      trainer('1:0:../../outside', `2:0:${outside}`, `3:symlink:${outside}`, `4:symdir:${outside}`, '5:4096', '6:100'),
      { storage: registry(), maxCheckpointBytes: 1000, maxWaitingUploads: 8 },
    );
    const assignment = makeAssignment({ total_steps: 7, checkpoint: { storage: STORAGE } });
    const { outcome, events, stats } = await runTask(executor, assignment);
    // The two paths that name a place outside are invalid lines; the symlinks are refused when opened.
    expect(stats.invalid_lines).toBe(2);
    expect(events.logs.filter((l) => l.endsWith('ignored: checkpoint file outside the task directory'))).toHaveLength(2);
    expect(events.logs).toContain('checkpoint at step 3 not uploaded, so not reported: refused: symlink');
    expect(events.logs).toContain('checkpoint at step 4 not uploaded, so not reported: refused: symlink');
    expect(events.logs).toContain("checkpoint at step 5 not uploaded, so not reported: the checkpoint is larger than the agent's bound of 1000 bytes");
    expect(events.checkpoints.map((c) => c.step)).toEqual([6]);
    expect(outcome.kind).toBe('completed');
    const prefix = `${STORAGE}${assignment.run_id}/`;
    expect(await store.list(prefix)).toEqual([`${prefix}pretrain/step-6`]);
    expect(JSON.stringify(events.logs)).not.toContain(PLANTED);
    expect(existsSync(outside)).toBe(true);
  }, 30_000);

  it('reads a named path as inside the task directory only by its spelling', () => {
    const d = '/srv/agent/tsk_1';
    expect(localPath(d, 'checkpoints/step-1')).toBe('/srv/agent/tsk_1/checkpoints/step-1');
    expect(localPath(d, '/srv/agent/tsk_1/step-1')).toBe('/srv/agent/tsk_1/step-1');
    for (const bad of ['../step', 'a/../../b', './a', 'a//b', '/srv/agent/tsk_10/x', '/etc/passwd', 'a\\b', 'a\u0000b', '/srv/agent/tsk_1', 'x'.repeat(1025)]) {
      expect(localPath(d, bad), bad).toBeNull();
    }
  });
});
