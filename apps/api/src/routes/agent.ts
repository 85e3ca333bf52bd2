import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  ASSIGNMENTS_MAX_WAIT_S,
  HEARTBEATS_MAX_BEATS,
  agentHeartbeatBody,
  agentHeartbeatsBody,
  agentRegisterBody,
  checkpointBody,
  restoredBody,
  completeBody,
  failBody,
  progressBody,
  policyBody,
  rolloutBatchBody,
  rolloutPollQuery,
  taskIdSchema,
} from '@ito/contracts';
import { assignments, heartbeat, registerAgent } from '../agent/agent-service.js';
import { certainHeartbeat, certainHeartbeats } from '../agent/heartbeat-body.js';
import { heartbeats } from '../agent/heartbeats-service.js';
import { pollRollouts, postRolloutBatch, publishPolicy } from '../agent/rollout-service.js';
import { reportTask, type ReportInput } from '../agent/task-report-service.js';
import type { Principal } from '../auth/principal.js';
import { defineRoute, type RegisteredRoute } from '../http/route.js';
import type { Resources } from '../resources.js';

const taskParams = z.strictObject({ id: taskIdSchema });
const knownList = z
  .string()
  .max(16 * 40)
  .transform((v) => (v === '' ? [] : v.split(',')))
  .pipe(z.array(taskIdSchema).max(16));
const assignmentsQuery = z.strictObject({
  wait_s: z.coerce.number().int().min(0).max(ASSIGNMENTS_MAX_WAIT_S).default(0),
  known: knownList.optional(),
});

type NodePrincipal = Extract<Principal, { kind: 'node' }>;

/**
 * The beats a batch would hold, for admission before it is validated. One that cannot be valid (not a list,
 * empty, or over the bound) takes one unit: its validation refuses it at once, with its own code.
 */
const beatsIn = (raw: unknown): number => {
  const beats = (raw as { beats?: unknown } | null)?.beats;
  return Array.isArray(beats) && beats.length >= 1 && beats.length <= HEARTBEATS_MAX_BEATS ? beats.length : 1;
};
const nodeOf = (p: Principal | null) => p as NodePrincipal;

/** The node agent's routes: a node credential can call these and nothing else, and only for its own node. */
export function registerAgentRoutes(app: FastifyInstance, res: Resources, registry: RegisteredRoute[]): void {
  defineRoute(app, res, registry, {
    method: 'POST',
    url: '/agent/register',
    summary: 'The agent of one booked node says who it is (version, executor, GPUs); the answer sets its heartbeat.',
    access: { node: true },
    body: agentRegisterBody,
    handler: async ({ principal, body }) => ({ data: await registerAgent(res, nodeOf(principal), body) }),
  });

  defineRoute(app, res, registry, {
    method: 'POST',
    url: '/agent/heartbeat',
    summary:
      'Liveness and GPU health (no event); answers which of its tasks to stop and what each should do. A process holding as many beats as it can sheds the rest with 429 and Retry-After; the next beat is the retry.',
    access: { node: true },
    admission: res.heartbeats,
    body: agentHeartbeatBody,
    certainBody: certainHeartbeat,
    handler: async ({ principal, body, certainBodyText }) => ({ data: await heartbeat(res, nodeOf(principal), body, certainBodyText) }),
  });

  defineRoute(app, res, registry, {
    method: 'POST',
    url: '/agent/heartbeats',
    summary:
      "The beats of several nodes on one agent host (at most 64, each with its own node credential, each node once): answered beat by beat in order, a beat whose credential is unknown or revoked refused alone. Admission counts beats: a batch beyond what the process holds is shed whole with 429 and Retry-After.",
    access: { node: true },
    admission: res.heartbeats,
    admissionUnits: beatsIn,
    body: agentHeartbeatsBody,
    certainBody: certainHeartbeats,
    // Each refused beat spends the address's failed-authentication budget as a single heartbeat's would.
    handler: async ({ req, body, certainBodyText }) => ({
      data: await heartbeats(res, body, (refused) => Array.from({ length: refused }, () => res.authFailures.record(req.ip)), certainBodyText),
    }),
  });

  defineRoute(app, res, registry, {
    method: 'GET',
    url: '/agent/assignments',
    summary: "The node's active tasks; held open up to wait_s seconds while they are exactly the `known` ones.",
    access: { node: true },
    query: assignmentsQuery,
    handler: async ({ principal, query, reply }) => {
      const gone = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableFinished) gone.abort();
      };
      reply.raw.once('close', onClose);
      try {
        return { data: await assignments(res, nodeOf(principal), query.wait_s, query.known ?? [], gone.signal) };
      } finally {
        reply.raw.off('close', onClose);
      }
    },
  });

  const reports = [
    { kind: 'progress', body: progressBody, summary: 'Training progress (step, tokens, loss, throughput); rank 0 speaks for the stage.' },
    { kind: 'checkpoint', body: checkpointBody, summary: "A checkpoint fully written under the run's checkpoint storage." },
    { kind: 'restored', body: restoredBody, summary: "A resumed attempt's task restored the checkpoint it resumes from: bytes read and seconds taken (once per task)." },
    { kind: 'complete', body: completeBody, summary: 'The task finished; evaluation tasks report their scores.' },
    { kind: 'fail', body: failBody, summary: 'The task failed (crash, GPU fault, error) or stopped as it was told.' },
  ] as const;
  for (const r of reports) {
    defineRoute(app, res, registry, {
      method: 'POST',
      url: `/agent/tasks/:id/${r.kind}`,
      summary: `${r.summary} Fenced by attempt; a repeated sequence number is acknowledged, not recorded twice.`,
      access: { node: true },
      params: taskParams,
      body: r.body as z.ZodType,
      handler: async ({ principal, params, body }) => ({
        data: await reportTask(res, nodeOf(principal), params.id, { type: r.kind, body } as ReportInput),
      }),
    });
  }
  defineRoute(app, res, registry, {
    method: 'POST',
    url: '/agent/tasks/:id/rollouts',
    summary: 'RLVR: a rollout task posts a batch of verified completions tagged with the policy version that sampled them; answers the newest policy.',
    access: { node: true },
    params: taskParams,
    body: rolloutBatchBody,
    handler: async ({ principal, params, body }) => ({ data: await postRolloutBatch(res, nodeOf(principal), params.id, body) }),
  });

  defineRoute(app, res, registry, {
    method: 'GET',
    url: '/agent/tasks/:id/rollouts',
    summary: 'RLVR: the rank-0 trainer takes the batches within the staleness bound of its policy version; older ones are rejected and counted.',
    access: { node: true },
    params: taskParams,
    query: rolloutPollQuery,
    handler: async ({ principal, params, query, reply }) => {
      const gone = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableFinished) gone.abort();
      };
      reply.raw.once('close', onClose);
      try {
        return { data: await pollRollouts(res, nodeOf(principal), params.id, query, gone.signal) };
      } finally {
        reply.raw.off('close', onClose);
      }
    },
  });

  defineRoute(app, res, registry, {
    method: 'POST',
    url: '/agent/tasks/:id/policy',
    summary: "RLVR: the rank-0 trainer publishes its next policy version, whose weights are under the run's checkpoint storage.",
    access: { node: true },
    params: taskParams,
    body: policyBody,
    handler: async ({ principal, params, body }) => ({ data: await publishPolicy(res, nodeOf(principal), params.id, body) }),
  });
}
