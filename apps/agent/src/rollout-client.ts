import type { AgentApi } from '@ito/client';
import type { Directive, Envelope } from '@ito/contracts';
import type { Logger } from '@ito/config';
import type { RolloutExchange } from './executors/executor.js';

/** The exchange was refused for good (the task was fenced off, or a call was invalid): the task must end. */
export class ExchangeRefused extends Error {
  override readonly name = 'ExchangeRefused';
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

export interface RolloutClientOptions {
  api: AgentApi;
  taskId: string;
  attempt: number;
  logger: Logger;
  retryMs: number;
  /** Called with each answer's directive, as task reports are: a stop reaches the task either way. */
  onDirective: (d: Directive) => void;
}

/**
 * One RLVR task's side of the exchange (docs/pipeline.md, "Trainer and rollout"). Every call is resent until
 * answered, as task reports are (a batch carries a sequence number, a policy its version, so a resend is
 * harmless); a refusal that is not retryable ends the call with `ExchangeRefused`.
 */
export class RolloutClient implements RolloutExchange {
  private seq = 0;

  constructor(private readonly opts: RolloutClientOptions) {}

  async postBatch(batch: Parameters<RolloutExchange['postBatch']>[0]) {
    const seq = ++this.seq;
    const d = await this.call(() => this.opts.api.rolloutBatch(this.opts.taskId, { attempt: this.opts.attempt, seq, ...batch }));
    return { policy: d.policy, trainer_done: d.trainer_done };
  }

  async publishPolicy(policy: { version: number; uri: string }) {
    await this.call(() => this.opts.api.publishPolicy(this.opts.taskId, { attempt: this.opts.attempt, ...policy }));
  }

  async pollBatches(query: { policy_version: number; wait_s: number; max: number }) {
    const d = await this.call(() => this.opts.api.pollRollouts(this.opts.taskId, { attempt: this.opts.attempt, ...query }));
    return { batches: d.batches, rejected: d.rejected };
  }

  private async call<T extends { directive: Directive }>(send: () => Promise<Envelope<T>>): Promise<T> {
    for (;;) {
      try {
        const answer = await send();
        if (answer.ok) {
          this.opts.onDirective(answer.data.directive);
          return answer.data;
        }
        if (!answer.error.retryable) {
          const details = answer.error.details as { directive?: Directive } | undefined;
          if (details?.directive === 'stop') this.opts.onDirective('stop');
          throw new ExchangeRefused(`the rollout exchange was refused (${answer.error.code})`, answer.error.code);
        }
        this.opts.logger.warn({ task_id: this.opts.taskId, code: answer.error.code }, 'a rollout exchange call was not taken; resending');
      } catch (err) {
        if (err instanceof ExchangeRefused) throw err;
        this.opts.logger.warn({ task_id: this.opts.taskId, err: { message: (err as Error).message } }, 'the API did not answer a rollout exchange call; resending');
      }
      await new Promise((r) => setTimeout(r, this.opts.retryMs));
    }
  }
}
