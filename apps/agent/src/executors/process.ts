import { chmod, mkdir, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { Assignment, TaskSpec } from '@ito/contracts';
import { defaultStorageRegistry, type StorageRegistry } from '@ito/storage';
import { stagePreparedData } from './prepared-data.js';
import { CheckpointStaging } from './checkpoint-staging.js';
import type { Executor, TaskEvents, TaskHandle, TaskOutcome } from './executor.js';
import { loadTrainerConfig, trainerFor, type TrainerConfig } from './trainer-config.js';
import { TrainerRun, type TrainerStreamStats } from './trainer-run.js';

export interface ProcessExecutorOptions {
  /**
   * The operator's trainer configuration (see `trainer-config.ts`): the path of its file, read and validated when
   * the executor is made (so a bad file stops the agent at start), or the parsed configuration.
   */
  trainerConfig: string | TrainerConfig;
  /** Absolute directory for task files, kept at mode 0700; trainers run with it as their working directory. */
  workDir: string;
  /**
   * Passed to trainers as `ITO_TIME_SCALE`, for trainers that scale their checkpoint clock.
   * @defaultValue 1
   */
  timeScale?: number;
  /**
   * Wall ms a trainer has, after the stop line, before SIGTERM.
   * @defaultValue 30_000
   */
  stopGraceMs?: number;
  /**
   * Wall ms after SIGTERM before SIGKILL.
   * @defaultValue 10_000
   */
  killGraceMs?: number;
  /**
   * stderr lines of one task forwarded to the agent's log; the rest are counted.
   * @defaultValue 10_000
   */
  maxStderrLines?: number;
  /**
   * Where PATH, HOME and LANG are taken from; nothing else of it reaches a trainer.
   * @defaultValue process.env
   */
  baseEnv?: NodeJS.ProcessEnv;
  /**
   * The drivers checkpoints are moved with, built from the agent's own environment (`ITO_S3_*`).
   * @defaultValue `file://` only
   */
  storage?: StorageRegistry;
  /**
   * Largest checkpoint the agent uploads or downloads.
   * @defaultValue 1 TiB
   */
  maxCheckpointBytes?: number;
  /**
   * Longest one checkpoint upload or download may take, in wall ms.
   * @defaultValue 3_600_000 (an hour)
   */
  transferTimeoutMs?: number;
  /**
   * Checkpoints of a task waiting for their upload behind the one being uploaded; past it the oldest is dropped.
   * @defaultValue 2
   */
  maxWaitingUploads?: number;
  /**
   * Most bytes of the run's prepared data a training task brings onto the node from a store the trainer cannot
   * open itself (./prepared-data.ts); shards past it stay in storage.
   * @defaultValue 4 GiB
   */
  maxDataBytes?: number;
}

/** A process task's handle also tells how its trainer's output went. */
export interface ProcessTaskHandle extends TaskHandle {
  readonly stats: TrainerStreamStats;
}

/**
 * Runs each task as the trainer command the operator configured for its stage, kind or by default. The task goes
 * to the trainer as a file (`--task <file>` and `ITO_TASK_FILE`, mode 0600 in the 0700 work directory); the trainer
 * gets a minimal environment (PATH, HOME, LANG, ITO_TASK_FILE, ITO_TIME_SCALE, ITO_WORK_DIR and its configured
 * variables) and never the agent's own, which holds the node credential and the store's. Each task has its own
 * directory under the work directory (its working directory, `ITO_WORK_DIR`): the checkpoints it restores from and,
 * from a store it cannot open itself, the run's prepared data (`ITO_DATA_DIR`) are downloaded there before it
 * starts, and the checkpoint files it writes there are uploaded by the agent
 * (./checkpoint-staging.ts). Protocol: docs/trainer-protocol.md.
 */
export class ProcessExecutor implements Executor {
  readonly kind = 'process' as const;
  private readonly trainers: TrainerConfig;
  private readonly opts: Required<Omit<ProcessExecutorOptions, 'trainerConfig'>>;

  constructor({ trainerConfig, ...opts }: ProcessExecutorOptions) {
    if (!isAbsolute(opts.workDir)) throw new Error('the process executor needs an absolute work directory');
    this.trainers = typeof trainerConfig === 'string' ? loadTrainerConfig(trainerConfig) : trainerConfig;
    this.opts = {
      timeScale: 1,
      stopGraceMs: 30_000,
      killGraceMs: 10_000,
      maxStderrLines: 10_000,
      baseEnv: process.env,
      storage: defaultStorageRegistry(),
      maxCheckpointBytes: 2 ** 40,
      transferTimeoutMs: 3_600_000,
      maxWaitingUploads: 2,
      maxDataBytes: 4 * 2 ** 30,
      ...opts,
    };
  }

  start(assignment: Assignment, events: TaskEvents): ProcessTaskHandle {
    const spec = assignment.spec;
    const command = trainerFor(this.trainers, spec);
    const taskFile = join(this.opts.workDir, `${assignment.task_id}.task.json`);
    let staging: CheckpointStaging | null = null;
    const run = command
      ? new TrainerRun(spec, events, {
          argv: [...command.argv, '--task', taskFile],
          env: { ...this.trainerEnv(taskFile, command.env ?? {}), ...distributedEnv(spec) },
          cwd: join(this.opts.workDir, assignment.task_id),
          stopGraceMs: this.opts.stopGraceMs,
          killGraceMs: this.opts.killGraceMs,
          maxStderrLines: this.opts.maxStderrLines,
          checkpointFile: (line) => (staging ? staging.offer(line) : 'the task directory is not ready'),
        })
      : null;
    const done = this.execute(assignment, taskFile, run, events, (s) => (staging = s));
    return {
      done,
      stop: (request) => run?.stop(request),
      get stats() {
        return run?.stats ?? { lines: 0, invalid_lines: 0, oversized_lines: 0, stderr_lines: 0, dropped_stderr_lines: 0 };
      },
    };
  }

  private async execute(assignment: Assignment, taskFile: string, run: TrainerRun | null, events: TaskEvents, staged: (s: CheckpointStaging) => void): Promise<TaskOutcome> {
    const failed = (reason: string): TaskOutcome => ({ kind: 'failed', failure: 'error', reason, step: assignment.spec.start_step, elapsed_s: 0 });
    if (!run) return failed(`no trainer is configured for stage ${assignment.stage} (nor its kind, nor a default)`);
    let taskDir: string;
    try {
      await this.writeTaskFile(taskFile, assignment);
      taskDir = await this.makeTaskDir(assignment.task_id);
    } catch (err) {
      await rm(taskFile, { force: true });
      return failed(`task file could not be written (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    const staging = new CheckpointStaging(assignment.spec, taskDir, events, {
      storage: this.opts.storage,
      timeScale: this.opts.timeScale,
      maxBytes: this.opts.maxCheckpointBytes,
      timeoutMs: this.opts.transferTimeoutMs,
      maxWaiting: this.opts.maxWaitingUploads,
    });
    staged(staging);
    try {
      let restoring: Record<string, string>;
      try {
        restoring = await staging.stageIn();
        const limits = { maxDataBytes: this.opts.maxDataBytes, timeoutMs: this.opts.transferTimeoutMs };
        Object.assign(restoring, await stagePreparedData(assignment.spec, taskDir, this.opts.storage, limits, (line) => events.log(line)));
      } catch (err) {
        return failed((err as Error).message);
      }
      const outcome = await run.run({ env: { ITO_WORK_DIR: taskDir, ...restoring }, restoreSeconds: staging.restoreSeconds });
      // The checkpoints still being uploaded belong to this attempt: it ends once they are in storage or lost.
      const { newestLost } = await staging.settled();
      if (outcome.kind === 'completed' && newestLost) {
        return { kind: 'failed', failure: 'error', reason: 'the last checkpoint could not be uploaded to the run’s storage', step: outcome.step, elapsed_s: outcome.elapsed_s };
      }
      return outcome;
    } finally {
      await rm(taskFile, { force: true });
      await rm(taskDir, { recursive: true, force: true });
    }
  }

  /** The task's own directory (mode 0700), emptied of anything a previous run of the same task left. */
  private async makeTaskDir(taskId: string): Promise<string> {
    const dir = join(await realpath(this.opts.workDir), taskId);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { mode: 0o700 });
    return dir;
  }

  private async writeTaskFile(file: string, assignment: Assignment): Promise<void> {
    await mkdir(this.opts.workDir, { recursive: true, mode: 0o700 });
    if (((await stat(this.opts.workDir)).mode & 0o077) !== 0) await chmod(this.opts.workDir, 0o700);
    await writeFile(file, `${JSON.stringify(assignment)}\n`, { mode: 0o600 });
    await chmod(file, 0o600);
  }

  private trainerEnv(taskFile: string, configured: Record<string, string>): Record<string, string> {
    const base = this.opts.baseEnv;
    return {
      PATH: base.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: base.HOME ?? this.opts.workDir,
      LANG: base.LANG ?? 'C.UTF-8',
      ...configured,
      ITO_TASK_FILE: taskFile,
      ITO_TIME_SCALE: String(this.opts.timeScale),
    };
  }
}

/**
 * torch.distributed's environment contract (`init_method="env://"`): this task's rank among the attempt's tasks,
 * their number, and rank 0's endpoint. One task per node, so the local rank is 0. Without an endpoint (one node, or
 * rank 0's agent offers none) only the rank and world size are set.
 */
export function distributedEnv(spec: Pick<TaskSpec, 'rank' | 'world_size' | 'rendezvous'>): Record<string, string> {
  return {
    RANK: String(spec.rank),
    WORLD_SIZE: String(spec.world_size),
    LOCAL_RANK: '0',
    ...(spec.rendezvous ? { MASTER_ADDR: spec.rendezvous.master_addr, MASTER_PORT: String(spec.rendezvous.master_port) } : {}),
  };
}
