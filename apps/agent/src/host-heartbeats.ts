import { HEARTBEATS_MAX_BEATS, fail, type AgentHeartbeatBody, type Envelope, type HeartbeatAnswer, type HeartbeatsAnswer } from '@ito/contracts';
import type { AgentApi } from '@ito/client';

/** What an agent sends its beat through: the single route by default, or a host's batch. */
export type HeartbeatSender = (body: AgentHeartbeatBody) => Promise<Envelope<HeartbeatAnswer>>;

export interface HostHeartbeatsOptions {
  /**
   * How long the first beat of a batch waits for the host's other agents at most; the batch goes as soon as
   * every agent still beating has a beat in it. @defaultValue 250
   */
  windowMs?: number;
}

interface Pending {
  credential: string;
  api: AgentApi;
  body: AgentHeartbeatBody;
  resolve: (answer: Envelope<HeartbeatAnswer>) => void;
  reject: (err: unknown) => void;
}

const REFUSED = new Set(['unauthenticated', 'credential_revoked', 'forbidden']);

/**
 * The heartbeats of every node agent one process runs on one host, sent as one `POST /v1/agent/heartbeats` per
 * interval instead of one request per node: each beat carries its node's own credential, and each agent gets
 * back exactly the answer a single heartbeat would have given it. A batch goes when every agent still beating
 * (one that was in either of the last two batches, or has not beaten yet) has its beat in it, or `windowMs` after
 * its first beat. Agents beat again one interval after their answer, so agents answered by one batch stay in
 * step: after the first batch, which may hold a beat up to `windowMs` (a fraction of an interval; a node is lost
 * only after several), each batch goes as soon as the last agent's beat arrives. The request is carried with the
 * credential of one of the batch's nodes; if the API refuses that credential, the next node's carries it.
 */
export class HostHeartbeats {
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Every agent's node credential, with how many batches in a row went without its beat. */
  private readonly missed = new Map<string, number>();
  /** Nodes whose credential the API refused as a carrier: never asked to carry again. */
  private readonly refusedCarriers = new Set<string>();

  constructor(private readonly opts: HostHeartbeatsOptions = {}) {}

  /** The sender for one node's agent: `api` is that node's own client, `credential` its node credential. */
  sender(credential: string, api: AgentApi): HeartbeatSender {
    if (!this.missed.has(credential)) this.missed.set(credential, 0);
    return (body) =>
      new Promise((resolve, reject) => {
        this.pending.push({ credential, api, body, resolve, reject });
        if (this.pending.length >= HEARTBEATS_MAX_BEATS || this.everyoneIn()) this.flush();
        else this.timer ??= setTimeout(() => this.flush(), this.opts.windowMs ?? 250);
      });
  }

  /** Whether every agent still beating has a beat waiting. */
  private everyoneIn(): boolean {
    const waiting = new Set(this.pending.map((p) => p.credential));
    for (const [credential, missed] of this.missed) if (missed < 2 && !waiting.has(credential)) return false;
    return true;
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending.splice(0, HEARTBEATS_MAX_BEATS);
    if (this.pending.length > 0) this.timer = setTimeout(() => this.flush(), 0);
    if (batch.length === 0) return;
    const sent = new Set(batch.map((p) => p.credential));
    for (const [credential, missed] of this.missed) this.missed.set(credential, sent.has(credential) ? 0 : missed + 1);
    void this.send(batch);
  }

  private async send(batch: Pending[]): Promise<void> {
    const body = { beats: batch.map((p) => ({ credential: p.credential, tasks: p.body.tasks, gpus: p.body.gpus })) };
    try {
      for (const carrier of batch) {
        if (this.refusedCarriers.has(carrier.credential) && carrier !== batch.at(-1)) continue;
        const answer = await carrier.api.heartbeats(body);
        if (!answer.ok && REFUSED.has(answer.error.code) && carrier !== batch.at(-1)) {
          this.refusedCarriers.add(carrier.credential);
          continue;
        }
        deliver(batch, answer);
        return;
      }
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }
}

/** Each agent gets the answer a single heartbeat would have given it: its own beat's, or the request's refusal. */
function deliver(batch: Pending[], answer: Envelope<HeartbeatsAnswer>): void {
  batch.forEach((p, i) => {
    if (!answer.ok) return p.resolve(answer);
    const beat = answer.data.beats[i];
    if (!beat) return p.resolve(fail('internal_error', 'the batch answer left this beat out'));
    if (!beat.ok) return p.resolve(fail(beat.error.code, beat.error.message));
    p.resolve({ ok: true, live_api_contacted: true, notice: null, data: { interval_s: answer.data.interval_s, stop: beat.stop, directives: beat.directives } });
  });
}
