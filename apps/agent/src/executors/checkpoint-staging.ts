import { lstat, mkdir, rm, unlink } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import type { TaskSpec } from '@ito/contracts';
import { ensureDirectoryNoFollow, type StorageRegistry } from '@ito/storage';
import { checkpointUri } from './checkpoint-uri.js';
import { downloadFile, TransferError, uploadFile, type TransferLimits } from './checkpoint-transfer.js';
import type { TaskEvents } from './executor.js';
import type { CheckpointFileLine } from './trainer-protocol.js';

export interface StagingOptions extends TransferLimits {
  /** The drivers of this agent, built from its own environment (`ITO_S3_*`): never a credential of a task. */
  storage: StorageRegistry;
  /** Trainer seconds per wall second: upload and download times are reported on the trainer's clock. */
  timeScale: number;
  /** Checkpoints waiting for their upload behind the one being uploaded; past it the oldest waiting one is dropped. */
  maxWaiting: number;
}

/** Where the agent puts the checkpoints a task restores from, inside the task's directory. */
export const RESTORE_DIR = 'restore';

const MAX_PATH_CHARS = 1024;
const UNSAFE = /[\u0000-\u001f\u007f\\]/;

type CheckpointRef = NonNullable<TaskSpec['resume_from']>;

interface Waiting {
  line: CheckpointFileLine;
  path: string;
}

/**
 * Moves one task's checkpoints between its directory on this node and the run's checkpoint storage. Before the
 * trainer starts, it downloads the checkpoints the task restores from (`resume_from`, `init_from`). While the
 * trainer trains, it uploads each checkpoint file the trainer names, one at a time in the order named, and only
 * then reports it (`CheckpointSaved`), with the bytes the store took and the seconds the save took in all (the
 * trainer's write, then the upload). A checkpoint that fails to upload is not reported at all. A file named by the
 * trainer must be a regular file inside the task's directory, reached through no symlink; the agent removes it
 * once it has been moved, so the directory holds at most the checkpoints still waiting.
 */
export class CheckpointStaging {
  private readonly waiting: Waiting[] = [];
  private uploading: Promise<void> | null = null;
  private idle: Array<() => void> = [];
  /** Whether the newest checkpoint named so far has not reached storage (failed or dropped). */
  private newestLost = false;
  /** Wall seconds the download of `resume_from` took, on the trainer's clock: part of the restore. */
  restoreSeconds = 0;

  constructor(
    private readonly spec: TaskSpec,
    /** The task's own directory: absolute, without symlinks, made by the executor. */
    readonly dir: string,
    private readonly events: TaskEvents,
    private readonly opts: StagingOptions,
  ) {}

  /**
   * Downloads `resume_from` and `init_from` (when this agent has a driver for their scheme) into the task's
   * directory, and answers the environment that names them to the trainer: `ITO_RESUME_FILE`, `ITO_INIT_FILE`.
   * Rejects with a {@link TransferError} when one cannot be had: the task cannot start without it.
   */
  async stageIn(): Promise<Record<string, string>> {
    const env: Record<string, string> = {};
    const refs: Array<[string, 'resume' | 'init', CheckpointRef | null]> = [
      ['ITO_RESUME_FILE', 'resume', this.spec.resume_from],
      ['ITO_INIT_FILE', 'init', this.spec.init_from],
    ];
    for (const [name, what, ref] of refs) {
      if (!ref) continue;
      if (!this.opts.storage.supports(ref.uri)) {
        this.events.log(`the checkpoint to ${what} from is on a store this agent has no driver for: the trainer reads it itself`);
        continue;
      }
      await mkdir(join(this.dir, RESTORE_DIR), { recursive: true, mode: 0o700 });
      const path = join(this.dir, RESTORE_DIR, `${what}-step-${ref.step}`);
      let got: { bytes: number; seconds: number };
      try {
        got = await downloadFile(this.opts.storage, ref.uri, path, this.opts);
      } catch (err) {
        throw new TransferError(`the checkpoint to ${what} from (step ${ref.step}) could not be downloaded: ${(err as Error).message}`);
      }
      this.events.log(`downloaded the checkpoint to ${what} from (step ${ref.step}): ${got.bytes} bytes in ${got.seconds.toFixed(3)} s`);
      if (what === 'resume') this.restoreSeconds = got.seconds * this.opts.timeScale;
      env[name] = path;
    }
    return env;
  }

  /**
   * Takes a checkpoint file the trainer named: answers why it is refused (the line is then invalid), or null once
   * it is queued for upload. Refused: a path outside the task's directory, or with `.`/`..`/empty segments.
   */
  offer(line: CheckpointFileLine): string | null {
    const path = localPath(this.dir, line.path);
    if (path === null) return 'checkpoint file outside the task directory';
    this.waiting.push({ line, path });
    this.newestLost = false;
    if (this.waiting.length > this.opts.maxWaiting + (this.uploading ? 0 : 1)) {
      const dropped = this.waiting.shift()!;
      this.events.log(`checkpoint at step ${dropped.line.step} dropped unuploaded: newer ones were waiting`);
      void removeLocal(dropped.path);
    }
    this.pump();
    return null;
  }

  /** Resolves once every queued checkpoint was uploaded or given up; says whether the newest one was lost. */
  async settled(): Promise<{ newestLost: boolean }> {
    if (this.uploading || this.waiting.length > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    return { newestLost: this.newestLost };
  }

  private pump(): void {
    if (this.uploading) return;
    const next = this.waiting.shift();
    if (!next) {
      for (const resolve of this.idle.splice(0)) resolve();
      return;
    }
    this.uploading = this.upload(next).finally(() => {
      this.uploading = null;
      this.pump();
    });
  }

  private async upload({ line, path }: Waiting): Promise<void> {
    const uri = checkpointUri(this.spec, line.step);
    try {
      const sent = await uploadFile(this.opts.storage, path, uri, this.opts);
      const scale = this.opts.timeScale;
      this.events.log(`uploaded the checkpoint at step ${line.step}: ${sent.bytes} bytes in ${sent.seconds.toFixed(3)} s`);
      this.events.checkpoint({
        step: line.step,
        uri,
        bytes: sent.bytes,
        save_seconds: line.save_seconds + sent.seconds * scale,
        async: line.async,
        ...(line.final ? { final: true } : {}),
        ...(line.elapsed_s !== undefined ? { elapsed_s: line.elapsed_s + sent.seconds * scale } : {}),
      });
      if (this.waiting.length === 0) this.newestLost = false;
    } catch (err) {
      this.events.log(`checkpoint at step ${line.step} not uploaded, so not reported: ${(err as Error).message}`);
      if (this.waiting.length === 0) this.newestLost = true;
    } finally {
      await removeLocal(path);
    }
  }
}

/**
 * Removes a checkpoint file once moved (or given up), only when it is a regular file reached through no symlink:
 * a trainer that named a file through a symlinked directory must not make the agent delete what it points to.
 * Anything else stays until the task's directory is removed whole (which never follows a symlink).
 */
async function removeLocal(path: string): Promise<void> {
  try {
    await ensureDirectoryNoFollow(dirname(path), { create: false });
    if ((await lstat(path)).isFile()) await unlink(path);
  } catch {
    // Refused or already gone: the directory's removal at the task's end takes what is left.
  }
}

/**
 * The absolute path of a file the trainer named, when it lies inside `dir` by its spelling: relative to `dir`, or
 * absolute under it; no `.`, `..` or empty segment, no control character or backslash. Symlinks are refused when
 * the file is opened (no component of its path may be one).
 */
export function localPath(dir: string, named: string): string | null {
  if (named.length > MAX_PATH_CHARS || UNSAFE.test(named)) return null;
  let relative = named;
  if (isAbsolute(named)) {
    if (!named.startsWith(`${dir}/`)) return null;
    relative = named.slice(dir.length + 1);
  }
  const segments = relative.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return null;
  return join(dir, ...segments);
}
