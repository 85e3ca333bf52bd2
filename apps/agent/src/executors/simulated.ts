import type { Assignment } from '@ito/contracts';
import { defaultStorageRegistry, type StorageRegistry } from '@ito/storage';
import type { Executor, TaskEvents, TaskHandle } from './executor.js';
import { FaultPlan, type SimFault } from './faults.js';
import { DEFAULT_BANDWIDTH, type BandwidthModel } from './simulated-model.js';
import { SimulatedTask, type SimulatedContext } from './simulated-task.js';

export interface SimulatedExecutorOptions {
  /**
   * `ITO_TIME_SCALE`: simulated seconds per wall second.
   * @defaultValue 1
   */
  timeScale?: number;
  /**
   * Shortest wall time between two progress reports of a task.
   * @defaultValue 250
   */
  progressIntervalMs?: number;
  /**
   * Shortest wall sleep of a task that is ahead of its clock, so a fast clock costs bounded timer wake-ups.
   * @defaultValue 20, or the progress interval when that is shorter
   */
  minTickMs?: number;
  /**
   * Faults to inject (`parseSimFaults(ITO_SIM_FAULTS)`); each fires at most once in this executor's life.
   * @defaultValue none
   */
  faults?: readonly SimFault[];
  /** @defaultValue {@link DEFAULT_BANDWIDTH} */
  bandwidth?: Partial<BandwidthModel>;
  /**
   * Where `file://` checkpoint records are written; other schemes are reported as simulated and not written.
   * @defaultValue the default registry (`file://`)
   */
  storage?: StorageRegistry;
}

/**
 * Runs tasks on a modelled clock instead of GPUs: the demo's, the tests' and the fleet benchmark's executor.
 * Step time comes from the planner's throughput, checkpoints from the modelled bytes over a stated bandwidth,
 * losses and evaluation scores from the stated model of `simulated-model.ts`.
 */
export class SimulatedExecutor implements Executor {
  readonly kind = 'simulated' as const;
  private readonly ctx: SimulatedContext;

  constructor(opts: SimulatedExecutorOptions = {}) {
    const timeScale = opts.timeScale ?? 1;
    if (!(timeScale > 0 && Number.isFinite(timeScale))) throw new RangeError('timeScale must be a positive number');
    const progressIntervalMs = opts.progressIntervalMs ?? 250;
    this.ctx = {
      timeScale,
      progressIntervalMs,
      minTickMs: opts.minTickMs ?? Math.min(20, progressIntervalMs),
      faults: new FaultPlan(opts.faults ?? []),
      bandwidth: { ...DEFAULT_BANDWIDTH, ...opts.bandwidth },
      storage: opts.storage ?? defaultStorageRegistry(),
    };
  }

  start(assignment: Assignment, events: TaskEvents): TaskHandle {
    const task = new SimulatedTask(assignment.spec, events, this.ctx);
    const done = task.run();
    let ended = false;
    void done.then(() => (ended = true));
    return {
      done,
      stop: (opts) => {
        if (!ended) task.stop(opts);
      },
    };
  }
}
