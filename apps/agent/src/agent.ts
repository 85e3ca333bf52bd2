import type { Assignment, Directive, ExecutorKind, GpuHealth, Rendezvous } from '@ito/contracts';
import type { AgentApi } from '@ito/client';
import type { Logger } from '@ito/config';
import type { Executor, TaskHandle, TaskOutcome } from './executors/executor.js';
import type { HeartbeatSender } from './host-heartbeats.js';
import { RolloutClient } from './rollout-client.js';
import { TaskReporter } from './task-reporter.js';

export interface AgentOptions {
  api: AgentApi;
  executor: Executor;
  logger: Logger;
  version: string;
  /** GPU health as of now, sent with every heartbeat. */
  gpus: () => GpuHealth[];
  /** @defaultValue 1000 */
  progressIntervalMs?: number;
  /** How long the API may hold an assignments request. @defaultValue 20 */
  pollWaitS?: number;
  /** Back-off while the API cannot be reached. @defaultValue 1000 */
  retryMs?: number;
  /** How long a task may take to stop (with its final checkpoint) when the agent shuts down. @defaultValue 30000 */
  stopGraceMs?: number;
  hostname?: string;
  /** The endpoint this node offers as rank 0 of a multi-node stage (`--rendezvous-addr/--rendezvous-port`). */
  rendezvous?: Rendezvous | null;
  /**
   * Where its beats go: a host's batch (HostHeartbeats) when one process runs several node agents.
   * @defaultValue the single-node route, `api.heartbeat`
   */
  heartbeat?: HeartbeatSender;
}

interface Running {
  assignment: Assignment;
  handle: TaskHandle;
  reporter: TaskReporter;
  /** Why it was asked to stop; the final report says so. */
  stopping: string | null;
  ended: Promise<void>;
  /**
   * The furthest step the trainer reached, while it runs, on whatever rank: heartbeats carry it, so the monitor can
   * tell a hang from a slow step on every node. Null before its first step (a task without steps) and once the
   * trainer ended (its last reports may still be on their way): then there is no step to judge.
   */
  step: number | null;
}

/** The agent's credential was refused: no retry can help, the operator must act. */
export class AgentRefused extends Error {
  override readonly name = 'AgentRefused';
}

/**
 * The SSH-less node agent: it dials out only. It registers, heartbeats on the interval the API answers with,
 * long-polls for its node's tasks, runs each through the executor, and reports progress, checkpoints and the
 * outcome in order with sequence numbers (so a resend is harmless). A task the API no longer lists, or tells it
 * to stop, is stopped; on shutdown every task is stopped with a final checkpoint and handed back.
 */
export class Agent {
  private readonly running = new Map<string, Running>();
  /** Tasks that ended here: an answer that raced their end must not start them again. */
  private readonly finished = new Set<string>();
  private stopped = false;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private heartbeatMs = 5_000;
  private loop: Promise<void> | null = null;
  private readonly poll = new AbortController();

  constructor(private readonly opts: AgentOptions) {}

  get executorKind(): ExecutorKind {
    return this.opts.executor.kind;
  }

  /** Registers (retrying while the API is unreachable), then runs until `stop()`. */
  async start(): Promise<void> {
    const registration = await this.untilAnswered(() =>
      this.opts.api.register({ agent_version: this.opts.version, executor: this.opts.executor.kind, gpus: this.opts.gpus(), ...(this.opts.hostname ? { hostname: this.opts.hostname } : {}), ...(this.opts.rendezvous ? { rendezvous: this.opts.rendezvous } : {}) }),
    );
    this.heartbeatMs = registration.heartbeat_interval_s * 1000;
    this.opts.logger.info({ node_id: registration.node_id, booking_id: registration.booking_id, heartbeat_s: registration.heartbeat_interval_s }, 'agent registered');
    this.scheduleHeartbeat();
    this.loop = this.pollLoop();
  }

  /** Running task ids, for tests and status lines. */
  get tasks(): string[] {
    return [...this.running.keys()];
  }

  /** Stops polling, stops every task (final checkpoint first) and waits until its last report is answered. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.poll.abort();
    clearTimeout(this.heartbeatTimer);
    for (const r of this.running.values()) this.stopTask(r, 'the agent is shutting down', true);
    const grace = this.opts.stopGraceMs ?? 30_000;
    await Promise.race([Promise.all([...this.running.values()].map((r) => r.ended)), sleep(grace)]);
    await this.loop?.catch(() => undefined);
  }

  private async untilAnswered<T>(call: () => Promise<{ ok: true; data: T } | { ok: false; error: { code: string; retryable: boolean } }>): Promise<T> {
    for (;;) {
      try {
        const answer = await call();
        if (answer.ok) return answer.data;
        if (['unauthenticated', 'credential_revoked', 'forbidden'].includes(answer.error.code)) throw new AgentRefused(`the API refused this node's credential (${answer.error.code})`);
        this.opts.logger.warn({ code: answer.error.code }, 'the API refused a call; retrying');
      } catch (err) {
        if (err instanceof AgentRefused) throw err;
        this.opts.logger.warn({ err: { message: (err as Error).message } }, 'the API did not answer; retrying');
      }
      if (this.stopped) throw new Error('agent stopped');
      await sleep(this.opts.retryMs ?? 1_000);
    }
  }

  private scheduleHeartbeat(): void {
    if (this.stopped) return;
    this.heartbeatTimer = setTimeout(() => void this.beat().finally(() => this.scheduleHeartbeat()), this.heartbeatMs);
  }

  private async beat(): Promise<void> {
    try {
      const tasks = [...this.running.values()].map((r) => ({ task_id: r.assignment.task_id, attempt: r.assignment.attempt, ...(r.step !== null ? { step: r.step } : {}) }));
      const body = { tasks, gpus: this.opts.gpus() };
      const answer = await (this.opts.heartbeat ? this.opts.heartbeat(body) : this.opts.api.heartbeat(body));
      if (!answer.ok) {
        this.opts.logger.warn({ code: answer.error.code }, 'heartbeat refused');
        return;
      }
      this.heartbeatMs = answer.data.interval_s * 1000;
      for (const s of answer.data.stop) {
        const r = this.running.get(s.task_id);
        if (r) this.stopTask(r, s.reason, false);
      }
      for (const d of answer.data.directives) {
        const r = this.running.get(d.task_id);
        if (r) this.apply(r, d.directive);
      }
    } catch (err) {
      this.opts.logger.warn({ err: { message: (err as Error).message } }, 'heartbeat not answered');
    }
  }

  private async pollLoop(): Promise<void> {
    // What the last answer listed, started or not: the API holds the next request until the node's tasks differ
    // from these, so a listed task this agent will not run (told to stop, already finished here) costs one
    // answer, not a request loop. A task still stopping here that the API no longer lists (withdrawn, its trainer
    // taking its grace to exit) is not named either: naming it would make every answer differ at once, a request
    // loop for as long as the stop takes, which spends the node's rate limit and starves its heartbeats.
    let listedLast = new Set<string>();
    while (!this.stopped) {
      try {
        const ours = [...this.running.values()].filter((r) => r.stopping === null || listedLast.has(r.assignment.task_id)).map((r) => r.assignment.task_id);
        const known = [...new Set([...ours, ...listedLast])].slice(0, 16);
        const answer = await this.opts.api.assignments(this.opts.pollWaitS ?? 20, known);
        if (this.stopped) return;
        if (!answer.ok) {
          if (['unauthenticated', 'credential_revoked'].includes(answer.error.code)) {
            this.opts.logger.error({ code: answer.error.code }, 'the API refused this node credential; stopping every task');
            for (const r of this.running.values()) this.stopTask(r, 'credential refused', false);
            return;
          }
          await sleep(this.opts.retryMs ?? 1_000);
          continue;
        }
        const listed = new Set(answer.data.assignments.map((a) => a.task_id));
        listedLast = listed;
        for (const r of this.running.values()) if (!listed.has(r.assignment.task_id)) this.stopTask(r, 'withdrawn by the control plane', false);
        for (const a of answer.data.assignments) {
          if (!this.running.has(a.task_id) && !this.finished.has(a.task_id) && a.directive !== 'stop') this.startTask(a);
        }
      } catch (err) {
        if (this.stopped) return;
        this.opts.logger.warn({ err: { message: (err as Error).message } }, 'assignments not answered; retrying');
        await sleep(this.opts.retryMs ?? 1_000);
      }
    }
  }

  private startTask(assignment: Assignment): void {
    const log = this.opts.logger.child({ task_id: assignment.task_id, stage: assignment.stage, attempt: assignment.attempt });
    let entry: Running;
    const reporter = new TaskReporter({
      api: this.opts.api,
      taskId: assignment.task_id,
      attempt: assignment.attempt,
      firstSeq: assignment.next_seq,
      progressIntervalMs: this.opts.progressIntervalMs ?? 1_000,
      logger: log,
      retryMs: this.opts.retryMs ?? 1_000,
      onDirective: (d) => this.apply(entry, d),
    });
    const exchange =
      assignment.stage === 'rlvr'
        ? new RolloutClient({ api: this.opts.api, taskId: assignment.task_id, attempt: assignment.attempt, logger: log, retryMs: this.opts.retryMs ?? 1_000, onDirective: (d) => this.apply(entry, d) })
        : undefined;
    const handle = this.opts.executor.start(assignment, {
      progress: (p) => {
        entry.step = Math.max(entry.step ?? p.step, p.step);
        reporter.progress(p);
      },
      step: (n) => {
        entry.step = Math.max(entry.step ?? n, n);
      },
      checkpoint: (c) => reporter.checkpoint(c),
      // The checkpoint is the one the spec resumes from; a task with none to resume from has nothing to report.
      restored: (r) => {
        const from = assignment.spec.resume_from;
        if (from) reporter.restored({ checkpoint_id: from.checkpoint_id, ...r });
        else log.warn('the trainer reported a restore, but this attempt resumes from no checkpoint');
      },
      log: (message) => log.debug({ trainer: message }, 'trainer'),
      ...(exchange ? { exchange } : {}),
    });
    const ended = handle.done.then(async (outcome) => {
      entry.step = null;
      reporter.finish(finalReport(outcome, entry.stopping));
      await reporter.drained();
      this.running.delete(assignment.task_id);
      this.finished.add(assignment.task_id);
      if (this.finished.size > 1000) this.finished.delete(this.finished.values().next().value!);
      log.info({ outcome: outcome.kind, step: outcome.step }, 'task ended');
    });
    entry = { assignment, handle, reporter, stopping: null, ended, step: null };
    this.running.set(assignment.task_id, entry);
    log.info({ run_id: assignment.run_id, rank: assignment.spec.rank, start_step: assignment.spec.start_step }, 'task started');
    if (assignment.directive !== 'continue') this.apply(entry, assignment.directive);
  }

  private apply(r: Running | undefined, directive: Directive): void {
    if (!r || directive === 'continue') return;
    this.stopTask(r, directive === 'checkpoint_and_stop' ? 'asked to checkpoint and stop' : 'asked to stop', directive === 'checkpoint_and_stop');
  }

  private stopTask(r: Running, reason: string, checkpoint: boolean): void {
    if (r.stopping) return;
    r.stopping = reason;
    r.handle.stop({ checkpoint, reason });
  }
}

function finalReport(outcome: TaskOutcome, stopping: string | null) {
  switch (outcome.kind) {
    case 'completed':
      return { kind: 'complete' as const, body: { step: outcome.step, elapsed_s: outcome.elapsed_s, ...(outcome.metrics ? { metrics: outcome.metrics } : {}) } };
    case 'failed':
      return { kind: 'fail' as const, body: { kind: outcome.failure, reason: outcome.reason.slice(0, 512), step: outcome.step, elapsed_s: outcome.elapsed_s } };
    case 'stopped':
      return { kind: 'fail' as const, body: { kind: 'stopped' as const, reason: (stopping ?? outcome.reason).slice(0, 512), step: outcome.step, elapsed_s: outcome.elapsed_s } };
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
