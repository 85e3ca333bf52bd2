import type {
  AgentHeartbeatBody,
  AgentHeartbeatsBody,
  AgentRegisterBody,
  AgentRegistration,
  AssignmentsAnswer,
  CheckpointBody,
  CompleteBody,
  Envelope,
  FailBody,
  HeartbeatAnswer,
  HeartbeatsAnswer,
  PolicyAnswer,
  PolicyBody,
  ProgressBody,
  ReportAnswer,
  RestoredBody,
  RolloutBatchAnswer,
  RolloutBatchBody,
  RolloutPollAnswer,
} from '@ito/contracts';
import type { ItoClient } from './client.js';

const seg = (id: string) => encodeURIComponent(id);

/**
 * The node agent's routes, typed. Every call is safe to resend: registration and heartbeats say the same thing
 * twice, and a task report carries a sequence number the API records once.
 */
export class AgentApi {
  constructor(readonly http: ItoClient) {}

  register(body: AgentRegisterBody): Promise<Envelope<AgentRegistration>> {
    return this.http.post('/agent/register', body, { safeToResend: true });
  }
  heartbeat(body: AgentHeartbeatBody): Promise<Envelope<HeartbeatAnswer>> {
    return this.http.post('/agent/heartbeat', body, { safeToResend: true });
  }
  /**
   * The beats of several nodes on this host in one request, each with its own node credential; this client's
   * credential only carries the request. Answered beat by beat, in order.
   */
  heartbeats(body: AgentHeartbeatsBody): Promise<Envelope<HeartbeatsAnswer>> {
    return this.http.post('/agent/heartbeats', body, { safeToResend: true });
  }
  /** Held open by the server up to `waitS` while the node's tasks are exactly `known`. */
  assignments(waitS: number, known: string[]): Promise<Envelope<AssignmentsAnswer>> {
    return this.http.get('/agent/assignments', { wait_s: waitS, ...(known.length > 0 ? { known: known.join(',') } : {}) });
  }
  progress(taskId: string, body: ProgressBody): Promise<Envelope<ReportAnswer>> {
    return this.http.post(`/agent/tasks/${seg(taskId)}/progress`, body, { safeToResend: true });
  }
  checkpoint(taskId: string, body: CheckpointBody): Promise<Envelope<ReportAnswer>> {
    return this.http.post(`/agent/tasks/${seg(taskId)}/checkpoint`, body, { safeToResend: true });
  }
  /** A resumed attempt's task restored its checkpoint; recorded once per task. */
  restored(taskId: string, body: RestoredBody): Promise<Envelope<ReportAnswer>> {
    return this.http.post(`/agent/tasks/${seg(taskId)}/restored`, body, { safeToResend: true });
  }
  complete(taskId: string, body: CompleteBody): Promise<Envelope<ReportAnswer>> {
    return this.http.post(`/agent/tasks/${seg(taskId)}/complete`, body, { safeToResend: true });
  }
  fail(taskId: string, body: FailBody): Promise<Envelope<ReportAnswer>> {
    return this.http.post(`/agent/tasks/${seg(taskId)}/fail`, body, { safeToResend: true });
  }
  /** RLVR: a rollout task's batch; the sequence number makes a resend harmless. */
  rolloutBatch(taskId: string, body: RolloutBatchBody): Promise<Envelope<RolloutBatchAnswer>> {
    return this.http.post(`/agent/tasks/${seg(taskId)}/rollouts`, body, { safeToResend: true });
  }
  /** RLVR: the trainer publishes a policy version; the same version again is acknowledged as a duplicate. */
  publishPolicy(taskId: string, body: PolicyBody): Promise<Envelope<PolicyAnswer>> {
    return this.http.post(`/agent/tasks/${seg(taskId)}/policy`, body, { safeToResend: true });
  }
  /** RLVR: the trainer takes the batches within its staleness bound; held open up to `wait_s`. */
  pollRollouts(taskId: string, query: { attempt: number; policy_version: number; wait_s: number; max: number }): Promise<Envelope<RolloutPollAnswer>> {
    return this.http.get(`/agent/tasks/${seg(taskId)}/rollouts`, query);
  }
}
