import { ok, type Envelope } from '@ito/contracts';
import { toEnvelope, isServerFailure } from './answer.js';
import { backoffDelay, DEFAULT_BACKOFF, sleep as realSleep, type BackoffOptions } from './backoff.js';
import { exchange } from './exchange.js';
import { TransportError } from './transport-error.js';

export interface ItoClientOptions {
  /** Base URL of the API, e.g. http://127.0.0.1:8420 (the `/v1` prefix is added by the client). */
  baseUrl: string;
  /** Bearer credential; never logged and never placed in an error. */
  credential?: string | undefined;
  /** @defaultValue 5000 */
  connectTimeoutMs?: number;
  /** @defaultValue 30000 */
  timeoutMs?: number;
  /** Total attempts for a GET (connect failures, ambiguous failures and 5xx are retried). @defaultValue 3 */
  getAttempts?: number;
  /** Total sends of one keyed mutation, including resends after the server confirmed nothing exists. @defaultValue 3 */
  mutationAttempts?: number;
  backoff?: BackoffOptions;
  /** Injectable for tests that must not wait. */
  sleep?: (ms: number) => Promise<void>;
  userAgent?: string;
}

/** How a keyed mutation finds out, after an unknown outcome, whether the first send took effect. */
export type Recovery = () => Promise<{ found: true; data: unknown; label: string } | { found: false }>;

export interface MutationOptions {
  idempotencyKey?: string | undefined;
  /** Without it a keyed mutation is not resent after an unknown outcome (there is no way to look first). */
  recover?: Recovery | undefined;
  /**
   * The server recognises a repeat of this exact request by its body (an agent's report carries a sequence
   * number), so after an unknown outcome or a 5xx the same body is simply sent again.
   */
  safeToResend?: boolean | undefined;
}

type Query = Record<string, string | number | boolean | undefined>;

export class ItoClient {
  private readonly opts: Required<Omit<ItoClientOptions, 'credential' | 'userAgent'>> & Pick<ItoClientOptions, 'credential' | 'userAgent'>;

  constructor(options: ItoClientOptions) {
    this.opts = {
      connectTimeoutMs: 5_000,
      timeoutMs: 30_000,
      getAttempts: 3,
      mutationAttempts: 3,
      backoff: DEFAULT_BACKOFF,
      sleep: realSleep,
      ...options,
    };
  }

  get baseUrl(): string {
    return this.opts.baseUrl;
  }

  /** A copy of this client that presents another credential (login verifies a key before storing it). */
  withCredential(credential: string): ItoClient {
    return new ItoClient({ ...this.opts, credential });
  }

  /** A read. Retried with backoff on connect failures, unknown outcomes and 5xx: reading twice is harmless. */
  async get<T = unknown>(path: string, query: Query = {}): Promise<Envelope<T>> {
    let last: TransportError | null = null;
    for (let attempt = 1; attempt <= this.opts.getAttempts; attempt++) {
      if (attempt > 1) await this.opts.sleep(backoffDelay(attempt - 1, this.opts.backoff));
      try {
        const { status, envelope } = await this.send('GET', path, query);
        if (isServerFailure(status) && attempt < this.opts.getAttempts) continue;
        return envelope as Envelope<T>;
      } catch (err) {
        if (!(err instanceof TransportError)) throw err;
        last = err;
      }
    }
    throw last ?? new TransportError('connect_failed', 'no attempt was made', false, false);
  }

  /**
   * A mutation. Resent only when it certainly did not arrive (connect failure), or, for a keyed mutation after
   * an unknown outcome, when `recover` has asked the server and the server said nothing exists for the key;
   * then the SAME body goes out with the SAME key. A keyless mutation whose body was sent is never resent.
   */
  async post<T = unknown>(path: string, body: unknown, mopts: MutationOptions = {}): Promise<Envelope<T>> {
    const key = mopts.idempotencyKey;
    const payload = JSON.stringify(body ?? {});
    let last: TransportError | null = null;
    let resentAfterUnknown = false;
    for (let attempt = 1; attempt <= this.opts.mutationAttempts; attempt++) {
      if (attempt > 1) await this.opts.sleep(backoffDelay(attempt - 1, this.opts.backoff));
      let unknownOutcome: TransportError;
      try {
        const { status, envelope } = await this.send('POST', path, {}, payload, key);
        if (mopts.safeToResend && isServerFailure(status) && attempt < this.opts.mutationAttempts) continue;
        const inProgress = !envelope.ok && envelope.error.code === 'idempotency_in_progress';
        if (!(key && mopts.recover && (isServerFailure(status) || inProgress))) {
          return resentAfterUnknown ? withNotice(envelope, 'resent with the same idempotency key after the server confirmed the first attempt had not taken effect') : (envelope as Envelope<T>);
        }
        if (attempt === this.opts.mutationAttempts) return envelope as Envelope<T>;
        unknownOutcome = new TransportError('transport_ambiguous', `the server answered ${status}; the outcome is unknown`, true, true);
      } catch (err) {
        if (!(err instanceof TransportError)) throw err;
        last = err;
        if (!err.liveApiContacted) continue; // nothing reached the server: resending cannot duplicate anything
        if (mopts.safeToResend) continue; // the server recognises the repeat and records it once
        if (!key || !mopts.recover) throw err;
        unknownOutcome = err;
      }
      const found = await this.lookUp(mopts.recover, unknownOutcome, key);
      if (found.found) {
        return ok(found.data as T, {
          notice: `recovered after an ambiguous transport failure (${unknownOutcome.code}): ${found.label} already existed for idempotency key ${key}; nothing was sent twice`,
        });
      }
      last = unknownOutcome;
      resentAfterUnknown = true;
    }
    throw last ?? new TransportError('connect_failed', 'no attempt was made', false, false);
  }

  private async lookUp(recover: Recovery, cause: TransportError, key: string) {
    try {
      return await recover();
    } catch (err) {
      const why = err instanceof Error ? err.message : 'unknown';
      throw new TransportError(
        'transport_ambiguous',
        `${cause.message}; looking the request up by its idempotency key also failed (${why}). Re-run the same command with the same key: the server replays the first answer`,
        true,
        cause.bodySent,
        { idempotency_key: key },
      );
    }
  }

  private async send(method: string, path: string, query: Query, body?: string, idempotencyKey?: string) {
    const url = new URL(`/v1${path}`, this.opts.baseUrl);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': this.opts.userAgent ?? 'ito-client' };
    if (this.opts.credential) headers.authorization = `Bearer ${this.opts.credential}`;
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const res = await exchange({ method, url, headers, body, connectTimeoutMs: this.opts.connectTimeoutMs, timeoutMs: this.opts.timeoutMs });
    return { status: res.status, envelope: toEnvelope(res.status, res.body, `${method} /v1${path}`, url.host) };
  }
}

function withNotice<T>(envelope: Envelope<unknown>, notice: string): Envelope<T> {
  const combined = envelope.notice ? `${notice}; ${envelope.notice}` : notice;
  return { ...envelope, notice: combined } as Envelope<T>;
}
