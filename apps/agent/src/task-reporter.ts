import type { CheckpointBody, CompleteBody, Directive, Envelope, FailBody, ProgressBody, ReportAnswer, RestoredBody } from '@ito/contracts';
import type { AgentApi } from '@ito/client';
import type { Logger } from '@ito/config';

type Report =
  | { kind: 'progress'; body: Omit<ProgressBody, 'seq' | 'attempt'> }
  | { kind: 'checkpoint'; body: Omit<CheckpointBody, 'seq' | 'attempt'> }
  | { kind: 'restored'; body: Omit<RestoredBody, 'seq' | 'attempt'> }
  | { kind: 'complete'; body: Omit<CompleteBody, 'seq' | 'attempt'> }
  | { kind: 'fail'; body: Omit<FailBody, 'seq' | 'attempt'> };

export interface TaskReporterOptions {
  api: AgentApi;
  taskId: string;
  attempt: number;
  /** The API's next expected sequence number for this task (from the assignment). */
  firstSeq: number;
  /** Progress is sent at most this often; the latest progress replaces an unsent one. */
  progressIntervalMs: number;
  logger: Logger;
  /** Called with each answer's directive, and with 'stop' when the API refuses the task (fenced off). */
  onDirective: (directive: Directive) => void;
  /** Wait between resends while the API cannot be reached. @defaultValue 1000 */
  retryMs?: number;
  /** How many unsent reports are kept while the API is unreachable; the oldest progress goes first. @defaultValue 1000 */
  maxBuffered?: number;
}

/**
 * Sends one task's reports in order, one at a time, each with the next sequence number. Progress is coalesced
 * (only the newest unsent one is kept) and paced; checkpoints and the final report are never dropped. While the
 * API is unreachable reports wait in a bounded buffer and are resent unchanged: the API records each sequence
 * number once, so a resend after a lost answer is harmless.
 */
export class TaskReporter {
  private readonly queue: Report[] = [];
  private seq: number;
  private sending: Promise<void> | null = null;
  private lastProgressAt = 0;
  private fenced = false;
  private idle: Array<() => void> = [];

  constructor(private readonly opts: TaskReporterOptions) {
    this.seq = opts.firstSeq;
  }

  progress(body: Omit<ProgressBody, 'seq' | 'attempt'>): void {
    const last = this.queue.at(-1);
    if (last?.kind === 'progress') this.queue[this.queue.length - 1] = { kind: 'progress', body };
    else this.push({ kind: 'progress', body });
  }

  checkpoint(body: Omit<CheckpointBody, 'seq' | 'attempt'>): void {
    this.push({ kind: 'checkpoint', body });
  }

  restored(body: Omit<RestoredBody, 'seq' | 'attempt'>): void {
    this.push({ kind: 'restored', body });
  }

  finish(report: { kind: 'complete'; body: Omit<CompleteBody, 'seq' | 'attempt'> } | { kind: 'fail'; body: Omit<FailBody, 'seq' | 'attempt'> }): void {
    this.push(report);
  }

  /** Resolves once every queued report was answered (or the task was fenced off). */
  drained(): Promise<void> {
    if (this.queue.length === 0 && !this.sending) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Unsent reports, for an agent that stops before the API answered them all. */
  get pending(): number {
    return this.queue.length;
  }

  private push(report: Report): void {
    // Once refused, the task may still confirm that it stopped: the API records that acknowledgement for a task
    // it withdrew (a cancel, a failed attempt), and refuses it harmlessly for one a newer attempt superseded.
    if (this.fenced && !isStopAck(report)) return;
    const max = this.opts.maxBuffered ?? 1000;
    if (this.queue.length >= max) {
      const oldProgress = this.queue.findIndex((r) => r.kind === 'progress');
      this.queue.splice(oldProgress >= 0 ? oldProgress : 0, 1);
    }
    this.queue.push(report);
    this.kick();
  }

  /** Starts the one drain loop unless it runs; a report queued as a loop ends starts the next. */
  private kick(): void {
    if (this.sending) return;
    this.sending = this.drain().finally(() => {
      this.sending = null;
      if (this.queue.length > 0) this.kick();
      else for (const resolve of this.idle.splice(0)) resolve();
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      if (head.kind === 'progress') {
        const wait = this.lastProgressAt + this.opts.progressIntervalMs - Date.now();
        if (wait > 0) await sleep(wait);
      }
      // Progress may have been replaced while we waited: send whatever is at the head now.
      const report = this.queue[0]!;
      const seq = this.seq;
      const answer = await this.sendUntilAnswered(report, seq);
      this.queue.shift();
      this.seq = seq + 1;
      if (report.kind === 'progress') this.lastProgressAt = Date.now();
      if (answer.ok) {
        this.opts.onDirective(answer.data.directive);
      } else if (answer.error.code === 'invalid_state' || answer.error.code === 'not_found') {
        // Withdrawn, superseded by a newer attempt, or gone: stop it and send nothing more but its stop.
        if (this.fenced) continue;
        this.fenced = true;
        this.queue.splice(0, this.queue.length, ...this.queue.filter(isStopAck));
        this.opts.logger.warn({ task_id: this.opts.taskId, code: answer.error.code }, 'the API refused this task; stopping it');
        this.opts.onDirective('stop');
      } else {
        this.opts.logger.warn({ task_id: this.opts.taskId, code: answer.error.code, kind: report.kind }, 'a task report was refused');
      }
    }
  }

  private send(report: Report, seq: number): Promise<Envelope<ReportAnswer>> {
    const { api, taskId, attempt } = this.opts;
    switch (report.kind) {
      case 'progress':
        return api.progress(taskId, { ...report.body, attempt, seq });
      case 'checkpoint':
        return api.checkpoint(taskId, { ...report.body, attempt, seq });
      case 'restored':
        return api.restored(taskId, { ...report.body, attempt, seq });
      case 'complete':
        return api.complete(taskId, { ...report.body, attempt, seq });
      case 'fail':
        return api.fail(taskId, { ...report.body, attempt, seq });
    }
  }

  private async sendUntilAnswered(report: Report, seq: number): Promise<Envelope<ReportAnswer>> {
    const { taskId } = this.opts;
    for (;;) {
      try {
        const answer = await this.send(report, seq);
        // Rate limited, or the server failed: the report was not recorded, so it goes again unchanged.
        if (answer.ok || !answer.error.retryable) return answer;
        this.opts.logger.warn({ task_id: taskId, code: answer.error.code }, 'a task report was not taken; resending');
        await sleep(this.opts.retryMs ?? 1_000);
      } catch (err) {
        this.opts.logger.warn({ task_id: taskId, err: { message: (err as Error).message } }, 'the API did not answer a report; resending');
        await sleep(this.opts.retryMs ?? 1_000);
      }
    }
  }
}

function isStopAck(report: Report): boolean {
  return report.kind === 'fail' && report.body.kind === 'stopped';
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
