import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { parseStrictJson, type TaskSpec } from '@ito/contracts';
import { isUnderRunPrefix } from './checkpoint-uri.js';
import type { TaskEvents, TaskOutcome } from './executor.js';
import { LineSplitter } from './line-splitter.js';
import { MAX_TRAINER_LINE_BYTES, trainerLineSchema, type CheckpointFileLine, type ControlLine, type ExchangeReply, type TrainerLine } from './trainer-protocol.js';

/** What the agent learnt about a trainer's output, for its own log and for tests. */
export interface TrainerStreamStats {
  lines: number;
  invalid_lines: number;
  oversized_lines: number;
  stderr_lines: number;
  dropped_stderr_lines: number;
}

export interface TrainerRunOptions {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  /** Wall ms after the stop line before SIGTERM, and after SIGTERM before SIGKILL. */
  stopGraceMs: number;
  killGraceMs: number;
  maxStderrLines: number;
  /**
   * Takes a checkpoint file the trainer wrote in its directory, for the agent to upload and then report: answers
   * why it is refused, or null. Unset: such lines are invalid.
   */
  checkpointFile?: (line: CheckpointFileLine) => string | null;
}

/** What the agent prepared before the trainer starts: more environment, and seconds already spent restoring. */
export interface TrainerStart {
  env?: Record<string, string>;
  restoreSeconds?: number;
}

/** Lines of a kind logged one by one before the rest are only counted. */
const LOGGED_INVALID_LINES = 20;
const MAX_STDERR_LINE_CHARS = 1024;
/** Protocol lines are flat; 32 levels leave room for a trainer's nesting and none for a parser-exhausting one. */
const MAX_LINE_DEPTH = 32;

/**
 * One trainer process: reads its protocol lines, forwards them as task events, sends it control lines, and ends
 * in an outcome. Every stdout line is validated; an invalid one is counted and logged by number and reason only.
 * The process runs in its own process group, so the signals of a stop reach whatever it started.
 */
export class TrainerRun {
  readonly stats: TrainerStreamStats = { lines: 0, invalid_lines: 0, oversized_lines: 0, stderr_lines: 0, dropped_stderr_lines: 0 };
  private child: ChildProcessWithoutNullStreams | null = null;
  private stopRequest: { checkpoint: boolean; reason: string } | null = null;
  private exited = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private step: number;
  private reported = false;
  private elapsed: number | null = null;
  private metrics: Record<string, number> | undefined;
  private readonly started = performance.now();
  private restoreSeconds = 0;

  constructor(
    private readonly spec: TaskSpec,
    private readonly events: TaskEvents,
    private readonly opts: TrainerRunOptions,
  ) {
    this.step = spec.start_step;
  }

  /** Starts the trainer; settles when it has exited and both of its output streams are drained. */
  run(start: TrainerStart = {}): Promise<TaskOutcome> {
    // Stopped before it started: there is nothing to save and no process to start.
    if (this.stopRequest) return Promise.resolve({ kind: 'stopped', reason: this.stopRequest.reason, step: this.step, elapsed_s: 0 });
    this.restoreSeconds = start.restoreSeconds ?? 0;
    return new Promise((resolve) => {
      const [command, ...args] = this.opts.argv;
      const env = { ...this.opts.env, ...start.env };
      const child = spawn(command!, args, { cwd: this.opts.cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      this.child = child;
      const stdout = new LineSplitter(MAX_TRAINER_LINE_BYTES, (line, n) => this.onStdoutLine(line, n), (n) => this.invalid(n, 'longer than 64 KiB', true));
      const stderr = new LineSplitter(MAX_TRAINER_LINE_BYTES, (line) => this.onStderrLine(line), () => this.onStderrLine('[a line longer than 64 KiB]'));
      child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
      child.stdout.on('end', () => stdout.end());
      child.stderr.on('end', () => stderr.end());
      // A trainer that closes its stdin early makes our stop line fail with EPIPE; the signals still follow.
      child.stdin.on('error', () => {});
      child.on('error', (err: NodeJS.ErrnoException) => {
        this.finish();
        resolve({ kind: 'failed', failure: 'error', reason: `trainer could not be started (${err.code ?? 'error'})`, step: this.step, elapsed_s: this.elapsedSeconds() });
      });
      child.on('close', (code, signal) => {
        this.finish();
        resolve(this.outcome(code, signal));
      });
    });
  }

  stop(request: { checkpoint: boolean; reason: string }): void {
    if (this.stopRequest || this.exited) return;
    this.stopRequest = request;
    if (this.child) this.sendStop();
  }

  private sendStop(): void {
    const line: ControlLine = { type: 'stop', checkpoint: this.stopRequest!.checkpoint };
    this.child!.stdin.write(`${JSON.stringify(line)}\n`);
    this.timers.push(
      setTimeout(() => {
        this.signal('SIGTERM');
        this.timers.push(setTimeout(() => this.signal('SIGKILL'), this.opts.killGraceMs));
      }, this.opts.stopGraceMs),
    );
  }

  private signal(signal: NodeJS.Signals): void {
    if (this.exited || this.child?.pid === undefined) return;
    this.events.log(`trainer did not stop in time: ${signal}`);
    try {
      process.kill(-this.child.pid, signal);
    } catch {
      // The group is already gone.
    }
  }

  private finish(): void {
    if (this.exited) return;
    this.exited = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.child?.stdin.destroy();
    if (this.stats.invalid_lines > 0) this.events.log(`trainer wrote ${this.stats.invalid_lines} invalid stdout line(s); they were ignored`);
    if (this.stats.dropped_stderr_lines > 0) this.events.log(`trainer stderr: ${this.stats.dropped_stderr_lines} further line(s) not logged`);
  }

  private outcome(code: number | null, signal: NodeJS.Signals | null): TaskOutcome {
    const step = this.step;
    const elapsed_s = this.elapsedSeconds();
    if (this.stopRequest) return { kind: 'stopped', reason: this.stopRequest.reason, step, elapsed_s };
    if (code === 0) {
      // A clean exit ends the stage; a rank that reported nothing (only rank 0 reports) has done all its steps.
      const done = this.reported ? step : Math.max(step, this.spec.total_steps);
      return { kind: 'completed', step: done, elapsed_s, ...(this.metrics ? { metrics: this.metrics } : {}) };
    }
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    return { kind: 'failed', failure: 'crash', reason: `trainer ${how}`, step, elapsed_s };
  }

  /** The trainer's own clock when it reports one, else wall seconds since it started. */
  private elapsedSeconds(): number {
    return this.elapsed ?? (performance.now() - this.started) / 1000;
  }

  private onStdoutLine(text: string, lineNumber: number): void {
    this.stats.lines++;
    if (text.trim() === '') return;
    const json = parseStrictJson(text, { maxDepth: MAX_LINE_DEPTH });
    if (!json.ok) return this.invalid(lineNumber, json.error.reason === 'syntax' ? 'not JSON' : json.error.reason.replace('_', ' '));
    const parsed = trainerLineSchema.safeParse(json.value);
    if (!parsed.success) {
      // A trainer waits for the answer to an exchange request: an invalid one is answered too, as refused.
      const type = (json.value as { type?: unknown } | null)?.type;
      if (type === 'rollout_batch' || type === 'policy' || type === 'want_batches') this.reply({ type: 'exchange_refused', code: 'validation_failed' });
      return this.invalid(lineNumber, 'not a protocol line');
    }
    this.forward(parsed.data, lineNumber);
  }

  private forward(line: TrainerLine, lineNumber: number): void {
    switch (line.type) {
      case 'progress': {
        const { type: _, ...progress } = line;
        this.note(progress.step, progress.elapsed_s);
        this.events.step?.(progress.step);
        // Only rank 0 reports the job's progress; another rank's lines only feed its node's heartbeat.
        if (this.spec.rank === 0) this.events.progress(progress);
        return;
      }
      case 'checkpoint': {
        if (!isUnderRunPrefix(line.uri, this.spec)) return this.invalid(lineNumber, "checkpoint outside the run's storage");
        const { type: _, ...checkpoint } = line;
        this.note(checkpoint.step, checkpoint.elapsed_s);
        this.events.checkpoint(checkpoint);
        return;
      }
      case 'checkpoint_file': {
        const refused = this.opts.checkpointFile ? this.opts.checkpointFile(line) : 'no checkpoint uploads for this task';
        if (refused) return this.invalid(lineNumber, refused);
        this.note(line.step, line.elapsed_s);
        return;
      }
      case 'restored': {
        if (line.step !== this.spec.resume_from?.step) return this.invalid(lineNumber, 'restore of a step this attempt does not resume from');
        const { type: _, ...restored } = line;
        // The agent's download of the checkpoint is part of the restore.
        this.events.restored({ ...restored, restore_seconds: restored.restore_seconds + this.restoreSeconds });
        return;
      }
      case 'metrics':
        this.metrics = line.metrics;
        if (line.step !== undefined) this.note(line.step, undefined);
        return;
      case 'log':
        this.events.log(`trainer: ${line.message}`);
        return;
      case 'rollout_batch':
      case 'policy':
      case 'want_batches':
        return this.relay(line, lineNumber);
      default: {
        const unreachable: never = line;
        return unreachable;
      }
    }
  }

  /**
   * RLVR: one exchange request of the trainer, relayed through the agent's fenced client; its answer goes back on
   * stdin. The trainer waits for each answer before its next request, so answers arrive in request order.
   */
  private relay(line: Extract<TrainerLine, { type: 'rollout_batch' | 'policy' | 'want_batches' }>, lineNumber: number): void {
    const exchange = this.events.exchange;
    const refuse = (why: string, code: string) => {
      this.reply({ type: 'exchange_refused', code });
      this.invalid(lineNumber, why);
    };
    if (!exchange) return refuse('no rollout exchange for this task', 'invalid_state');
    if (line.type === 'policy' && !isUnderRunPrefix(line.uri, this.spec)) return refuse("policy outside the run's storage", 'validation_failed');
    const call = async (): Promise<ExchangeReply> => {
      switch (line.type) {
        case 'rollout_batch': {
          const { type: _, ...batch } = line;
          return { type: 'rollout_ack', ...(await exchange.postBatch(batch)) };
        }
        case 'policy':
          await exchange.publishPolicy({ version: line.version, uri: line.uri });
          return { type: 'policy_ack', version: line.version };
        case 'want_batches':
          return { type: 'batches', ...(await exchange.pollBatches({ policy_version: line.policy_version, wait_s: line.wait_s, max: line.max })) };
      }
    };
    call().then(
      (reply) => this.reply(reply),
      (err: unknown) => this.reply({ type: 'exchange_refused', code: (err as { code?: string }).code ?? 'error' }),
    );
  }

  private reply(line: ExchangeReply): void {
    if (this.exited || !this.child) return;
    this.child.stdin.write(`${JSON.stringify(line)}\n`);
  }

  private note(step: number, elapsed: number | undefined): void {
    this.reported = true;
    this.step = Math.max(this.step, step);
    if (elapsed !== undefined) this.elapsed = elapsed;
  }

  private invalid(lineNumber: number, why: string, oversized = false): void {
    this.stats.invalid_lines++;
    if (oversized) this.stats.oversized_lines++;
    if (this.stats.invalid_lines <= LOGGED_INVALID_LINES) this.events.log(`trainer stdout line ${lineNumber} ignored: ${why}`);
  }

  private onStderrLine(line: string): void {
    if (this.stats.stderr_lines >= this.opts.maxStderrLines) {
      this.stats.dropped_stderr_lines++;
      return;
    }
    this.stats.stderr_lines++;
    this.events.log(`trainer stderr: ${line.length > MAX_STDERR_LINE_CHARS ? `${line.slice(0, MAX_STDERR_LINE_CHARS)}…` : line}`);
  }
}
