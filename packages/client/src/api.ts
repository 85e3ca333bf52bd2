import type { ConfirmationRequest, Envelope } from '@ito/contracts';
import { ItoClient, type Recovery } from './client.js';

export interface RunSummary {
  run_id: string;
  state: string;
  [field: string]: unknown;
}

export interface TrainRequest {
  booking_id: string;
  manifest: string;
  manifest_digest: string;
  confirmation_ref: string;
}

export type RunAction = 'cancel' | 'cleanup' | 'restart';

const seg = (id: string) => encodeURIComponent(id);

/** The routes of docs/contract.md "HTTP routes", typed. Every method answers with the server's envelope. */
export class ItoApi {
  constructor(readonly http: ItoClient) {}

  whoami(): Promise<Envelope<Record<string, unknown>>> {
    return this.http.get('/auth/whoami');
  }
  logout(): Promise<Envelope<unknown>> {
    return this.http.post('/auth/logout', {});
  }
  listBookings(): Promise<Envelope<{ bookings: Record<string, unknown>[] }>> {
    return this.http.get('/bookings');
  }
  getBooking(id: string): Promise<Envelope<Record<string, unknown>>> {
    return this.http.get(`/bookings/${seg(id)}`);
  }
  eligibility(bookingId: string): Promise<Envelope<Record<string, unknown>>> {
    return this.http.post(`/bookings/${seg(bookingId)}/eligibility`, {});
  }
  plan(body: { booking_id: string; manifest: string }): Promise<Envelope<Record<string, unknown>>> {
    return this.http.post('/plans', body);
  }
  requestConfirmation(body: ConfirmationRequest): Promise<Envelope<Record<string, unknown>>> {
    return this.http.post('/confirmations', body);
  }
  getConfirmation(ref: string): Promise<Envelope<Record<string, unknown>>> {
    return this.http.get(`/confirmations/${seg(ref)}`);
  }
  decideConfirmation(ref: string, decision: 'approve' | 'deny'): Promise<Envelope<Record<string, unknown>>> {
    return this.http.post(`/confirmations/${seg(ref)}/${decision}`, {});
  }

  /** Submits a run. After an unknown outcome it looks the key up first and resends only if no run exists. */
  train(body: TrainRequest, idempotencyKey: string): Promise<Envelope<RunSummary>> {
    return this.http.post('/runs', body, { idempotencyKey, recover: this.runRecovery(idempotencyKey) });
  }
  findRunsByKey(idempotencyKey: string): Promise<Envelope<{ runs: RunSummary[] }>> {
    return this.http.get('/runs', { idempotency_key: idempotencyKey });
  }
  getRun(id: string): Promise<Envelope<RunSummary>> {
    return this.http.get(`/runs/${seg(id)}`);
  }
  runLogs(id: string, query: Record<string, string | number | undefined> = {}): Promise<Envelope<Record<string, unknown>>> {
    return this.http.get(`/runs/${seg(id)}/logs`, query);
  }
  runMetrics(id: string): Promise<Envelope<Record<string, unknown>>> {
    return this.http.get(`/runs/${seg(id)}/metrics`);
  }
  runCheckpoints(id: string): Promise<Envelope<Record<string, unknown>>> {
    return this.http.get(`/runs/${seg(id)}/checkpoints`);
  }
  runEvents(id: string): Promise<Envelope<{ events: Record<string, unknown>[] }>> {
    return this.http.get(`/runs/${seg(id)}/events`);
  }

  /**
   * Cancel, cleanup or restart. These keys name the action, not a run, so there is no lookup by key: after an
   * unknown outcome the client does not resend, and the error says to repeat the command with the same key
   * (the server replays the first answer for a used key).
   */
  runAction(id: string, action: RunAction, body: { confirmation_ref: string; release_booking?: boolean; release_confirmation_ref?: string }, idempotencyKey: string): Promise<Envelope<RunSummary>> {
    return this.http.post(`/runs/${seg(id)}/${action}`, body, { idempotencyKey });
  }

  deskTelemetry(query: { group_by?: string | undefined; since?: string | undefined; until?: string | undefined }): Promise<Envelope<Record<string, unknown>>> {
    return this.http.get('/desk/telemetry', query);
  }
  auditEvents(query: { after?: string | number | undefined; limit?: number | undefined }): Promise<Envelope<Record<string, unknown>>> {
    return this.http.get('/audit/events', query);
  }
  auditDigest(): Promise<Envelope<Record<string, unknown>>> {
    return this.http.get('/audit/digest', {});
  }
  auditReplay(query: { as_of?: string | undefined; run_id?: string | undefined } = {}): Promise<Envelope<Record<string, unknown>>> {
    return this.http.get('/audit/replay', query);
  }

  private runRecovery(idempotencyKey: string): Recovery {
    return async () => {
      const answer = await this.findRunsByKey(idempotencyKey);
      if (!answer.ok) throw new Error(`the lookup was refused (${answer.error.code})`);
      const run = answer.data.runs[0];
      return run ? { found: true, data: run, label: `run ${run.run_id}` } : { found: false };
    };
  }
}
