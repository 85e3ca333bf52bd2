import { ItoError, type AgentHeartbeatsBody, type BatchedBeatAnswer, type HeartbeatsAnswer } from '@ito/contracts';
import { hashSecret } from '@ito/runs';
import { lookupNodeCredentials } from '../auth/node-credential-lookup.js';
import type { Resources } from '../resources.js';
import { beatOf, judgeReportedTasks, type NodePrincipal, type ReportedTaskRow } from './agent-service.js';
import { gpusTexts } from './gpus-text.js';
import type { Beat } from './liveness-writer.js';

type Verdict = { node: NodePrincipal } | { refused: 'unauthenticated' | 'credential_revoked' };

/**
 * `POST /v1/agent/heartbeats`: the beats of several nodes on one agent host in one request. Each beat is
 * authenticated by its own node credential, as a single heartbeat is by its bearer header (from the process's
 * credential cache, so a known node costs no read), and speaks only for that node. A beat whose credential is
 * unknown or revoked is refused alone, in its place in the answer; the others are recorded, in the liveness
 * writer's batches, before the answer is sent. `refusedBeats` is told how many were refused: each spends the
 * caller's failed-authentication budget as a single heartbeat with that credential would, so a batch is no way
 * to try more credentials than single requests could. `certainText`, the JSON text of a body the hand-written
 * check accepted, lets each beat's GPU list be stored as the bytes the agent sent ({@link gpusTexts}).
 */
export async function heartbeats(res: Resources, body: AgentHeartbeatsBody, refusedBeats: (n: number) => void, certainText?: string): Promise<HeartbeatsAnswer> {
  const verdicts = await verifyAll(res, body.beats);
  const nodes = new Set<string>();
  for (const v of verdicts) {
    if (!('node' in v)) continue;
    // Two credentials of one node cannot both be current; refused whole, before anything is written.
    if (nodes.has(v.node.nodeId)) throw new ItoError('validation_failed', 'body: beats: each node beats at most once per batch');
    nodes.add(v.node.nodeId);
  }
  const now = res.now();
  const recorded: Beat[] = [];
  const healthTexts = certainText !== undefined ? gpusTexts(certainText, body.beats.length) : undefined;
  let refused = 0;
  for (let i = 0; i < verdicts.length; i++) {
    const v = verdicts[i]!;
    if (!('node' in v)) {
      refused++;
      continue;
    }
    const beat = beatOf(v.node, body.beats[i]!, now);
    if (healthTexts) beat.healthText = healthTexts[i]!;
    recorded.push(beat);
  }
  // One promise for the batch's beats, settled when the last of them is written.
  await res.liveness.recordAll(recorded);
  if (recorded.length > 0) res.metrics.heartbeatsIngested.inc(recorded.length);
  if (refused > 0) refusedBeats(refused);
  const tasks = await reportedTasks(res, verdicts, body);
  const beats = verdicts.map((v, i): BatchedBeatAnswer => {
    if (!('node' in v)) return { ok: false, error: { code: v.refused, message: v.refused === 'credential_revoked' ? 'this node credential was revoked' : 'unknown credential' } };
    // An idle node's beat (most of a fleet's) names no task: nothing to look up or judge.
    if (body.beats[i]!.tasks.length === 0) return { ok: true, node_id: v.node.nodeId, stop: [], directives: [] };
    const own = new Map<string, ReportedTaskRow>();
    for (const t of body.beats[i]!.tasks) {
      const row = tasks.get(t.task_id);
      // A task is judged for a beat only when it is that beat's own node's: naming another's is "no such task".
      if (row && row.node_id === v.node.nodeId && row.tenant_id === v.node.tenantId) own.set(t.task_id, row);
    }
    return { ok: true, node_id: v.node.nodeId, ...judgeReportedTasks(body.beats[i]!.tasks, own) };
  });
  return { interval_s: res.agent.heartbeatIntervalS, beats };
}

/** Every task the recorded beats name, with its node and run, in one read for the whole batch (≤ 64 × 16 ids). */
async function reportedTasks(res: Resources, verdicts: Verdict[], body: AgentHeartbeatsBody): Promise<Map<string, ReportedTaskRow & { node_id: string; tenant_id: string }>> {
  const ids = new Set<string>();
  verdicts.forEach((v, i) => {
    if ('node' in v) for (const t of body.beats[i]!.tasks) ids.add(t.task_id);
  });
  if (ids.size === 0) return new Map();
  const { rows } = await res.pool.query<ReportedTaskRow & { node_id: string; tenant_id: string }>({
    name: 'ito_agent_batch_tasks',
    text: `select t.task_id, t.node_id, t.tenant_id, t.attempt, t.status, r.aggregate
           from tasks t left join runs r on r.run_id = t.run_id where t.task_id = any($1::text[])`,
    values: [[...ids]],
  });
  return new Map(rows.map((r) => [r.task_id, r]));
}

/**
 * Every beat's credential. A credential this process verified before is answered from the cache at once, as
 * `authenticate` would answer it (its hash, looked up while revocations are heard), without the bearer parsing,
 * shape check and promise `authenticate` spends on each: the body's schema already checked each credential's
 * shape, and only a credential found in the database is ever cached. The rest are read in one statement for
 * the whole batch ({@link verifyMisses}).
 */
async function verifyAll(res: Resources, beats: AgentHeartbeatsBody['beats']): Promise<Verdict[]> {
  const verdicts: Verdict[] = new Array<Verdict>(beats.length);
  let misses: Array<{ at: number; hash: string }> | null = null;
  for (let i = 0; i < beats.length; i++) {
    const hash = hashSecret(beats[i]!.credential);
    const cached = res.nodeCredentials.get(hash);
    if (cached) verdicts[i] = { node: { kind: 'node', ...cached } };
    else (misses ??= []).push({ at: i, hash });
  }
  if (misses) await verifyMisses(res, misses, verdicts);
  return verdicts;
}

/**
 * The credentials the cache did not answer, in ONE read for the batch (lookupNodeCredentials, the rule a single
 * request's bearer is checked by). One read each took a pooled connection each: when a host's credentials all
 * missed at once (a fresh process, the cache's TTL ending for nodes cached together, the LISTEN connection down) a
 * batch of 16 opened up to 16 connections, and the pool closed them again when idle.
 */
async function verifyMisses(res: Resources, misses: ReadonlyArray<{ at: number; hash: string }>, verdicts: Verdict[]): Promise<void> {
  const found = await lookupNodeCredentials(res.pool, misses.map((m) => m.hash), res.nodeCredentials);
  for (const { at, hash } of misses) {
    const v = found.get(hash)!;
    verdicts[at] = 'node' in v ? { node: { kind: 'node', ...v.node } } : v;
  }
}
