import type { TaskSpec } from '@ito/contracts';
import type { StorageRegistry } from '@ito/storage';
import { checkpointUri } from './checkpoint-uri.js';
import type { TaskEvents, TaskOutcome } from './executor.js';
import type { FaultKind, FaultPlan } from './faults.js';
import { ROLLOUT_SECONDS_PER_TRAINER_STEP, SimulatedRlvr } from './simulated-rlvr.js';
import { checkpointTiming, restoreSeconds, evalMetrics, evalSeconds, proxyEvalLoss, proxySeconds, stepSeconds, trainingLoss, type BandwidthModel } from './simulated-model.js';

/** What every task of one simulated executor shares. */
export interface SimulatedContext {
  timeScale: number;
  progressIntervalMs: number;
  minTickMs: number;
  faults: FaultPlan;
  bandwidth: BandwidthModel;
  storage: StorageRegistry;
}

type StopRequest = { checkpoint: boolean; reason: string };

interface PendingSave {
  step: number;
  done_at: number;
  save_seconds: number;
}

/**
 * One simulated task. Its clock runs at `timeScale` simulated seconds per wall second from the moment it starts;
 * steps, checkpoint stalls and evaluation each take their modelled simulated time, and the task waits (in wall
 * time) whenever it is ahead of its clock. Only rank 0 reports progress and checkpoints; every rank tells the agent
 * the step it reached (for the node's heartbeat) and spends the same modelled time, so all ranks of a stage end together.
 */
export class SimulatedTask {
  private readonly wallStart = performance.now();
  private sim = 0;
  private step: number;
  private lossFactor = 1;
  private slowFactor = 1;
  private hung = false;
  private stopRequest: StopRequest | null = null;
  private wake: (() => void) | null = null;
  private lastCheckpointAt = 0;
  private readonly pending: PendingSave[] = [];
  /** Checkpoint records being written, in order; the first write that failed, which fails the task. */
  private writes: Promise<void> = Promise.resolve();
  private writeFailure: unknown = null;
  private lastProgress: { wall: number; sim: number; tokens: number } | null = null;

  constructor(
    private readonly spec: TaskSpec,
    private readonly events: TaskEvents,
    private readonly ctx: SimulatedContext,
  ) {
    this.step = spec.start_step;
  }

  run(): Promise<TaskOutcome> {
    const exchange = this.events.exchange;
    const rlvr = this.spec.stage === 'rlvr' && exchange ? new SimulatedRlvr(this.spec, exchange) : null;
    const body =
      this.spec.kind === 'eval'
        ? this.runEval()
        : this.spec.kind === 'ladder'
          ? this.runLadder()
          : rlvr && this.spec.role === 'rollout'
          ? this.runRollout(rlvr)
          : this.runTraining(rlvr && this.spec.rank === 0 ? rlvr : null);
    return body
      .then(async (outcome) => {
        // Every checkpoint is reported before the task's end is.
        await this.writes;
        if (this.writeFailure !== null) throw this.writeFailure;
        return outcome;
      })
      .catch((err: unknown) => ({
      kind: 'failed',
      failure: 'error',
        reason: `simulated task failed: ${err instanceof Error ? err.message : 'unknown error'}`.slice(0, 512),
        step: this.step,
        elapsed_s: this.sim,
      }));
  }

  stop(request: StopRequest): void {
    if (this.stopRequest) return;
    this.stopRequest = request;
    this.wake?.();
  }

  /** RLVR's rank-0 trainer (`rlvr`) takes a step only on a batch within the staleness bound, then publishes. */
  private async runTraining(rlvr: SimulatedRlvr | null = null): Promise<TaskOutcome> {
    const total = this.spec.total_steps;
    const step = stepSeconds(this.spec);
    const interval = this.spec.checkpoint.interval_minutes * 60;
    if (this.meetFaults()) return this.crashed();
    if (!(await this.restore())) return this.stopped();
    while (this.step < total) {
      if (this.writeFailure !== null) throw this.writeFailure;
      if (this.stopRequest || this.hung) return this.stopped();
      if (rlvr && rlvr.needsBatch(this.step) && !(await this.batchFor(rlvr))) continue;
      if (!(await this.advance(step * this.slowFactor))) continue;
      this.step++;
      this.events.step?.(this.step);
      if (rlvr?.versionEnds(this.step)) await rlvr.publish(this.step);
      this.recordFinishedSaves();
      if (this.meetFaults()) return this.crashed();
      if (this.hung) continue;
      this.reportProgress();
      if (this.step < total && this.sim - this.lastCheckpointAt >= interval) await this.intervalCheckpoint();
    }
    for (const save of [...this.pending]) {
      if (!(await this.advance(save.done_at - this.sim))) return this.stopped();
      this.recordFinishedSaves();
    }
    // The stage's last checkpoint is the next stage's starting point; a resumed task that had nothing left to train
    // already has it.
    if (this.step !== this.spec.resume_from?.step) {
      const timing = checkpointTiming(this.spec.checkpoint.modelled_bytes, this.spec.world_size, false, this.ctx.bandwidth, this.slowCheckpointFactor());
      if (!(await this.advance(timing.save_seconds))) return this.stopped();
      this.record(this.step, timing.save_seconds, false);
    }
    return { kind: 'completed', step: this.step, elapsed_s: this.sim, ...(rlvr ? { metrics: rlvr.metrics() } : {}) };
  }

  /**
   * The trainer's next batch. Colocated (no rollout node), it first samples one itself with the policy it holds,
   * spending the modelled generation time on its own clock, and posts it through the exchange like a rollout
   * would; then it takes what the control plane hands over. False when there is none yet (or a stop came first).
   */
  private async batchFor(rlvr: SimulatedRlvr): Promise<boolean> {
    if (this.spec.rollout === 'colocated') {
      const seconds = stepSeconds(this.spec) * rlvr.stepsPerVersion * ROLLOUT_SECONDS_PER_TRAINER_STEP;
      if (!(await this.advance(seconds * this.slowFactor))) return false;
      await rlvr.postBatch();
    }
    return rlvr.takeBatch();
  }

  /**
   * A resumed attempt first reads its checkpoint back: every rank spends the modelled restore time, rank 0
   * reports it. False when told to stop meanwhile.
   */
  private async restore(): Promise<boolean> {
    const from = this.spec.resume_from;
    if (!from) return true;
    const bytes = this.spec.checkpoint.modelled_bytes;
    const seconds = restoreSeconds(bytes, this.spec.world_size, this.ctx.bandwidth);
    if (!(await this.advance(seconds))) return false;
    if (this.spec.rank === 0) this.events.restored({ step: from.step, bytes, restore_seconds: seconds });
    return true;
  }

  /** RLVR's rollout: each batch takes its modelled generation time; it ends when the trainer is done. */
  private async runRollout(rlvr: SimulatedRlvr): Promise<TaskOutcome> {
    const version = stepSeconds(this.spec) * rlvr.stepsPerVersion;
    const seconds = version * ROLLOUT_SECONDS_PER_TRAINER_STEP;
    if (this.meetFaults()) return this.crashed();
    for (;;) {
      if (this.stopRequest || this.hung) return this.stopped();
      if (!(await this.advance(seconds * this.slowFactor))) continue;
      const { trainerDone, ahead } = await rlvr.postBatch();
      if (trainerDone) return { kind: 'completed', step: this.step, elapsed_s: this.sim };
      // A rollout's steps are its batches: a fault at step n meets it after its n-th batch.
      this.step++;
      if (this.meetFaults()) return this.crashed();
      // A whole staleness bound ahead of the trainer: wait a policy version's steps rather than produce batches it would reject.
      if (ahead && !(await this.advance(version))) continue;
    }
  }

  private async runEval(): Promise<TaskOutcome> {
    if (this.meetFaults()) return this.crashed();
    while (this.hung && !this.stopRequest) await this.sleep(60_000);
    if (this.stopRequest || !(await this.advance(evalSeconds(this.spec) * this.slowFactor))) return this.stopped();
    return { kind: 'completed', step: this.step, elapsed_s: this.sim, metrics: evalMetrics(this.spec) };
  }

  /** A ladder proxy: trains its tokens at the proxy's pace, writes no checkpoint, reports its proxy eval loss. */
  private async runLadder(): Promise<TaskOutcome> {
    if (this.meetFaults()) return this.crashed();
    const shifted = this.spec.ladder?.mix === 'custom' ? this.ctx.faults.take('proxy_loss', this.spec, 0) : [];
    for (const fault of shifted) this.events.log(`simulated fault proxy_loss (factor ${fault.factor})`);
    while (this.hung && !this.stopRequest) await this.sleep(60_000);
    if (this.stopRequest || !(await this.advance(proxySeconds(this.spec) * this.slowFactor))) return this.stopped();
    const factor = shifted.reduce((f, fault) => f * (fault.factor ?? 1), 1);
    return { kind: 'completed', step: this.step, elapsed_s: this.sim, metrics: { proxy_eval_loss: proxyEvalLoss(this.spec, factor) } };
  }

  /** Applies the faults met at the current step boundary; true when one of them is a crash. */
  private meetFaults(): boolean {
    const take = (kind: FaultKind) => {
      const taken = this.ctx.faults.take(kind, this.spec, this.step);
      for (const fault of taken) this.events.log(`simulated fault ${fault.kind} at step ${this.step}${fault.factor === null ? '' : ` (factor ${fault.factor})`}`);
      return taken;
    };
    for (const f of take('loss_spike')) this.lossFactor *= f.factor ?? 1;
    for (const f of take('slow')) this.slowFactor *= f.factor ?? 1;
    if (take('hang').length > 0) this.hung = true;
    return take('crash').length > 0;
  }

  private slowCheckpointFactor(): number {
    return this.ctx.faults.take('slow_checkpoint', this.spec, this.step).reduce((product, f) => product * (f.factor ?? 1), 1);
  }

  private crashed(): TaskOutcome {
    return { kind: 'failed', failure: 'crash', reason: `simulated crash at step ${this.step}`, step: this.step, elapsed_s: this.sim };
  }

  /** Ends the task after a stop: a hung task cannot save, any other training task saves first if asked to. */
  private async stopped(): Promise<TaskOutcome> {
    while (!this.stopRequest) await this.sleep(60_000);
    const { checkpoint, reason } = this.stopRequest;
    if (this.hung) this.events.log('stopped while hung: no final checkpoint');
    else if (checkpoint && this.spec.kind !== 'eval') {
      const timing = checkpointTiming(this.spec.checkpoint.modelled_bytes, this.spec.world_size, false, this.ctx.bandwidth, this.slowCheckpointFactor());
      await this.advance(timing.save_seconds, false);
      this.record(this.step, timing.save_seconds, false, true);
    }
    return { kind: 'stopped', reason, step: this.step, elapsed_s: this.sim };
  }

  private async intervalCheckpoint(): Promise<void> {
    const async = this.spec.checkpoint.async;
    const timing = checkpointTiming(this.spec.checkpoint.modelled_bytes, this.spec.world_size, async, this.ctx.bandwidth, this.slowCheckpointFactor());
    this.lastCheckpointAt = this.sim;
    const step = this.step;
    if (async) {
      this.pending.push({ step, done_at: this.sim + timing.save_seconds, save_seconds: timing.save_seconds });
      if (await this.advance(timing.stall_seconds)) this.recordFinishedSaves();
    } else if (await this.advance(timing.save_seconds)) {
      this.record(step, timing.save_seconds, false);
    }
  }

  private recordFinishedSaves(): void {
    while (this.pending.length > 0 && this.pending[0]!.done_at <= this.sim) {
      const save = this.pending.shift()!;
      this.record(save.step, save.save_seconds, true);
    }
  }

  /**
   * A fully written checkpoint: rank 0 writes its record (file:// only) and then reports it. The write is real I/O
   * (flushed to disk), so it runs beside the simulated clock rather than on it: a slow disk delays the report,
   * never the modelled steps, whose save time was already spent. Records are written and reported in order.
   */
  private record(step: number, saveSeconds: number, async: boolean, final = false): void {
    if (this.spec.rank !== 0) return;
    const elapsed = this.sim;
    this.writes = this.writes
      .then(() => (this.writeFailure === null ? this.writeAndReport(step, saveSeconds, async, final, elapsed) : undefined))
      .catch((err: unknown) => {
        this.writeFailure ??= err;
      });
  }

  private async writeAndReport(step: number, saveSeconds: number, async: boolean, final: boolean, elapsed: number): Promise<void> {
    const uri = checkpointUri(this.spec, step);
    const writes = this.ctx.storage.supports(uri);
    if (writes) {
      const record = {
        schema: 'ito.simulated-checkpoint/v1',
        run_id: this.spec.run_id,
        stage: this.spec.stage,
        attempt: this.spec.attempt,
        step,
        tokens: step * this.spec.step_tokens,
        modelled_bytes: this.spec.checkpoint.modelled_bytes,
        save_seconds: saveSeconds,
        final,
      };
      await this.ctx.storage.driverFor(uri).write(uri, Buffer.from(`${JSON.stringify(record)}\n`));
    }
    this.events.checkpoint({
      step,
      uri,
      bytes: this.spec.checkpoint.modelled_bytes,
      save_seconds: saveSeconds,
      async,
      ...(final ? { final: true } : {}),
      ...(writes ? {} : { simulated: true }),
      elapsed_s: elapsed,
    });
  }

  /** At most one progress report per interval (the first as soon as a step is done), from rank 0 only. */
  private reportProgress(): void {
    if (this.spec.rank !== 0) return;
    const wall = performance.now();
    if (this.lastProgress && wall - this.lastProgress.wall < this.ctx.progressIntervalMs) return;
    const tokens = this.step * this.spec.step_tokens;
    const since = this.lastProgress ?? { sim: 0, tokens: this.spec.start_step * this.spec.step_tokens };
    const seconds = this.sim - since.sim;
    this.events.progress({
      step: this.step,
      tokens,
      loss: trainingLoss(this.spec.model.parameters, tokens) * this.lossFactor,
      throughput_tokens_per_s: seconds > 0 ? (tokens - since.tokens) / seconds : 0,
      elapsed_s: this.sim,
    });
    this.lastProgress = { wall, sim: this.sim, tokens };
  }

  /**
   * Spends `seconds` of simulated time, waiting in wall time while the task is ahead of its clock. Resolves false,
   * with the clock unmoved, when a stop (or, if interruptible, a hang) ends the wait first.
   */
  private async advance(seconds: number, interruptible = true): Promise<boolean> {
    const end = this.sim + Math.max(0, seconds);
    for (;;) {
      if (interruptible && (this.stopRequest || this.hung)) return false;
      const now = this.clock();
      if (now >= end) {
        this.sim = end;
        return true;
      }
      const wallMs = ((end - now) / this.ctx.timeScale) * 1000;
      await this.sleep(Math.max(this.ctx.minTickMs, Math.min(wallMs, 60_000)));
    }
  }

  private clock(): number {
    return ((performance.now() - this.wallStart) / 1000) * this.ctx.timeScale;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      this.wake = done;
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }
}
