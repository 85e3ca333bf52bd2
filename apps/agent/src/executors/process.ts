import { chmod, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { Assignment, TaskSpec } from '@ito/contracts';
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
}

/** A process task's handle also tells how its trainer's output went. */
export interface ProcessTaskHandle extends TaskHandle {
  readonly stats: TrainerStreamStats;
}

/**
 * Runs each task as the trainer command the operator configured for its stage, kind or by default. The task goes
 * to the trainer as a file (`--task <file>` and `ITO_TASK_FILE`, mode 0600 in the 0700 work directory); the trainer
 * gets a minimal environment (PATH, HOME, LANG, ITO_TASK_FILE, ITO_TIME_SCALE and its configured variables) and
 * never the agent's own, which holds the node credential. Protocol: docs/trainer-protocol.md.
 */
export class ProcessExecutor implements Executor {
  readonly kind = 'process' as const;
  private readonly trainers: TrainerConfig;
  private readonly opts: Required<Omit<ProcessExecutorOptions, 'trainerConfig'>>;

  constructor({ trainerConfig, ...opts }: ProcessExecutorOptions) {
    if (!isAbsolute(opts.workDir)) throw new Error('the process executor needs an absolute work directory');
    this.trainers = typeof trainerConfig === 'string' ? loadTrainerConfig(trainerConfig) : trainerConfig;
    this.opts = { timeScale: 1, stopGraceMs: 30_000, killGraceMs: 10_000, maxStderrLines: 10_000, baseEnv: process.env, ...opts };
  }

  start(assignment: Assignment, events: TaskEvents): ProcessTaskHandle {
    const spec = assignment.spec;
    const command = trainerFor(this.trainers, spec);
    const taskFile = join(this.opts.workDir, `${assignment.task_id}.task.json`);
    const run = command
      ? new TrainerRun(spec, events, {
          argv: [...command.argv, '--task', taskFile],
          env: { ...this.trainerEnv(taskFile, command.env ?? {}), ...distributedEnv(spec) },
          cwd: this.opts.workDir,
          stopGraceMs: this.opts.stopGraceMs,
          killGraceMs: this.opts.killGraceMs,
          maxStderrLines: this.opts.maxStderrLines,
        })
      : null;
    const done = this.execute(assignment, taskFile, run);
    return {
      done,
      stop: (request) => run?.stop(request),
      get stats() {
        return run?.stats ?? { lines: 0, invalid_lines: 0, oversized_lines: 0, stderr_lines: 0, dropped_stderr_lines: 0 };
      },
    };
  }

  private async execute(assignment: Assignment, taskFile: string, run: TrainerRun | null): Promise<TaskOutcome> {
    const failed = (reason: string): TaskOutcome => ({ kind: 'failed', failure: 'error', reason, step: assignment.spec.start_step, elapsed_s: 0 });
    if (!run) return failed(`no trainer is configured for stage ${assignment.stage} (nor its kind, nor a default)`);
    try {
      await this.writeTaskFile(taskFile, assignment);
    } catch (err) {
      return failed(`task file could not be written (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    try {
      return await run.run();
    } finally {
      await rm(taskFile, { force: true });
    }
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
