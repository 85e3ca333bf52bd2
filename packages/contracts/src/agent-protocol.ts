import { z } from 'zod';
import { STAGE_NAMES } from './stages.js';

/**
 * The node agent's protocol (CONTRACT "HTTP API", `/v1/agent/*`). The agent dials out; the API never connects
 * to a node. Every report names its task and the attempt it belongs to, and carries a sequence number that
 * grows by one per report of that task: a report of a superseded attempt is refused (fencing), and a report
 * the API already recorded (a resend after a lost answer) is acknowledged again without a second event.
 *
 * Everything here arrives from a machine outside the control plane, so every object is strict, every string
 * and array is bounded, and free text is short.
 */

const id = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-f]{32}$`), `expected ${prefix}_ and 32 lower-case hex characters`);
export const taskIdSchema = id('tsk');
export const runIdSchema = id('run');
export const nodeIdSchema = id('node');
export const checkpointIdSchema = id('ckpt');

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const seconds = z.number().min(0).max(1e9);
const attempt = z.number().int().min(1).max(10_000);
/** One report per task per sequence number; the first report of a task is 1. */
const seq = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const shortText = z.string().max(512);
const metricName = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/);
const metricsRecord = z.record(metricName, z.number().finite()).refine((m) => Object.keys(m).length <= 64, 'at most 64 metrics');
const storageUri = z.string().min(1).max(2048).regex(/^[a-z][a-z0-9+.-]*:\/\/[^\s]+$/, 'expected a URI such as file:///path or s3://bucket/key');

export const EXECUTORS = ['simulated', 'process'] as const;
export type ExecutorKind = (typeof EXECUTORS)[number];

export const TASK_ROLES = ['trainer', 'rollout', 'evaluator'] as const;
export type TaskRole = (typeof TASK_ROLES)[number];

/** One GPU as the agent sees it at a heartbeat. */
export const gpuHealthSchema = z.strictObject({
  index: z.number().int().min(0).max(63),
  healthy: z.boolean(),
  temperature_c: z.number().min(-50).max(200).optional(),
  utilization: z.number().min(0).max(1).optional(),
  memory_used_gb: z.number().min(0).max(10_000).optional(),
  ecc_errors: count.optional(),
});
export type GpuHealth = z.infer<typeof gpuHealthSchema>;

/**
 * Where rank 0 of a multi-node job listens for its peers (torch.distributed's MASTER_ADDR and MASTER_PORT): an
 * address the other nodes reach (IPv4 or a host name, never a URL) and a port the agent keeps free for trainers.
 */
export const rendezvousSchema = z.strictObject({
  addr: z
    .string()
    .min(1)
    .max(253)
    .regex(/^(?:\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*)$/, 'expected an IPv4 address or a host name'),
  port: z.number().int().min(1024).max(65535),
});
export type Rendezvous = z.infer<typeof rendezvousSchema>;

export const agentRegisterBody = z.strictObject({
  agent_version: z.string().min(1).max(64),
  executor: z.enum(EXECUTORS),
  hostname: z.string().min(1).max(255).regex(/^[A-Za-z0-9._-]+$/).optional(),
  gpus: z.array(gpuHealthSchema).max(64),
  /** The endpoint this node offers when its task is rank 0 of a multi-node stage; absent: it offers none. */
  rendezvous: rendezvousSchema.optional(),
});
export type AgentRegisterBody = z.infer<typeof agentRegisterBody>;

export const agentHeartbeatBody = z.strictObject({
  /** The tasks the agent is running right now, so the API can tell it which of them to stop. */
  tasks: z
    .array(
      z.strictObject({
        task_id: taskIdSchema,
        attempt,
        /**
         * The step its trainer last reported, while the trainer runs: what a hang is judged on. Absent before the
         * first progress (a rank that reports none, a task without steps) and after the trainer ended.
         */
        step: count.optional(),
      }),
    )
    .max(16),
  gpus: z.array(gpuHealthSchema).max(64),
});
export type AgentHeartbeatBody = z.infer<typeof agentHeartbeatBody>;

/** How many nodes' beats one `POST /v1/agent/heartbeats` carries at most. */
export const HEARTBEATS_MAX_BEATS = 64;

/**
 * A node credential as `ito-admin node register` issues it. In a batch each beat carries its node's own, so a
 * beat speaks only for the node whose credential it holds, exactly as a single heartbeat's bearer header does.
 */
export const nodeCredentialSchema = z.string().regex(/^ito_nc_[A-Za-z0-9_-]{43}$/, 'expected a node credential');

/**
 * The beats of several nodes on one agent host, one request per interval: each is a single heartbeat's body
 * with its node's credential. At most {@link HEARTBEATS_MAX_BEATS}, each credential once.
 */
export const agentHeartbeatsBody = z.strictObject({
  beats: z
    .array(agentHeartbeatBody.extend({ credential: nodeCredentialSchema }))
    .min(1)
    .max(HEARTBEATS_MAX_BEATS)
    .refine((beats) => new Set(beats.map((b) => b.credential)).size === beats.length, 'each node beats at most once per batch'),
});
export type AgentHeartbeatsBody = z.infer<typeof agentHeartbeatsBody>;

export const progressBody = z.strictObject({
  attempt,
  seq,
  step: count,
  tokens: count,
  loss: z.number().finite().min(0).max(1e6).optional(),
  throughput_tokens_per_s: z.number().finite().min(0).max(1e12).optional(),
  /** Seconds the task has trained so far on the executor's clock (scaled for the simulated executor). */
  elapsed_s: seconds,
  message: shortText.optional(),
});
export type ProgressBody = z.infer<typeof progressBody>;

export const checkpointBody = z.strictObject({
  attempt,
  seq,
  step: count,
  uri: storageUri,
  bytes: count,
  save_seconds: seconds,
  async: z.boolean(),
  /** The checkpoint taken because the control plane asked the task to stop (budget, operator). */
  final: z.boolean().optional(),
  /** The simulated executor writes a small record, not the modelled bytes. */
  simulated: z.boolean().optional(),
  elapsed_s: seconds.optional(),
});
export type CheckpointBody = z.infer<typeof checkpointBody>;

/**
 * A resumed attempt's task restored the checkpoint its spec's `resume_from` names, before its first step: how much
 * it read and how long that took (the restore's share of the recovery, reported beside the resume latency).
 */
export const restoredBody = z.strictObject({
  attempt,
  seq,
  checkpoint_id: checkpointIdSchema,
  step: count,
  bytes: count,
  restore_seconds: seconds,
});
export type RestoredBody = z.infer<typeof restoredBody>;

export const completeBody = z.strictObject({
  attempt,
  seq,
  step: count.optional(),
  elapsed_s: seconds,
  /** Evaluation tasks report the battery's scores here. */
  metrics: metricsRecord.optional(),
});
export type CompleteBody = z.infer<typeof completeBody>;

export const FAILURE_KINDS = ['crash', 'gpu_fault', 'error', 'stopped'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

export const failBody = z.strictObject({
  attempt,
  seq,
  /** `stopped`: the agent stopped the task because it was told to (withdrawn, or asked to checkpoint and stop). */
  kind: z.enum(FAILURE_KINDS),
  reason: shortText,
  step: count.optional(),
  elapsed_s: seconds.optional(),
});
export type FailBody = z.infer<typeof failBody>;

/** What the control plane wants of a running task, answered to every report and heartbeat. */
export const DIRECTIVES = ['continue', 'checkpoint_and_stop', 'stop'] as const;
export type Directive = (typeof DIRECTIVES)[number];

/** The task an agent runs: everything the executor needs, and nothing secret. */
export const taskSpecSchema = z.strictObject({
  run_id: runIdSchema,
  stage: z.enum(STAGE_NAMES),
  kind: z.enum(['train', 'post_train', 'eval', 'ladder']),
  attempt,
  rank: z.number().int().min(0).max(4095),
  world_size: z.number().int().min(1).max(4096),
  role: z.enum(TASK_ROLES),
  model: z.strictObject({ family: z.string().max(128), parameters: count, precision: z.enum(['bf16', 'fp8']) }),
  layout: z.strictObject({
    tp: count,
    pp: count,
    dp: count,
    cp: count,
    micro_batch: count,
    global_batch_sequences: count,
  }),
  sequence_length: count,
  /** Tokens this stage trains (0 for evaluation). */
  tokens: count,
  /** Tokens per optimizer step, and the steps of the whole stage. */
  step_tokens: count,
  total_steps: count,
  /** The planner's throughput for the whole job; the simulated executor models step time from it. */
  planned_tokens_per_s: z.number().positive(),
  /** The step to start from: 0, or the step of the checkpoint it resumes from. */
  start_step: count,
  /** A checkpoint of this stage to resume from (a retry or an approved restart). */
  resume_from: z.strictObject({ checkpoint_id: checkpointIdSchema, uri: storageUri, step: count }).nullable(),
  /** The last checkpoint of the previous stage: the weights this stage starts from. */
  init_from: z.strictObject({ checkpoint_id: checkpointIdSchema, uri: storageUri, step: count }).nullable(),
  /** Data batches to skip after a loss-spike restart: steps [from, to) of the failed attempt. */
  skip_steps: z.strictObject({ from: count, to: count }).nullable(),
  checkpoint: z.strictObject({
    /** Where this run's checkpoints go: `<storage>/<run id>/<stage>/step-<n>`. */
    storage: storageUri,
    interval_minutes: z.number().int().min(1).max(1440),
    async: z.boolean(),
    /** Modelled size of one checkpoint, for the simulated executor and for bandwidth figures. */
    modelled_bytes: count,
  }),
  eval: z.strictObject({ battery: z.string().max(256), metrics: z.array(metricName).max(64) }).nullable(),
  /** The post-training step's options, as the manifest states them. */
  recipe: z.record(z.string().max(64), z.union([z.string().max(2048), z.number(), z.boolean()])).nullable(),
  /**
   * RLVR tasks: `separate` when other nodes of the attempt roll out, `colocated` when none does and the rank-0
   * trainer samples its own batches on its node (docs/pipeline.md, "Trainer and rollout").
   */
  rollout: z.enum(['separate', 'colocated']).optional(),
  /**
   * Ladder proxy tasks: which mix the proxy trains on (the custom data refs, or the reference mix) and the data
   * refs (by index) that make the custom mix. The task reports `proxy_eval_loss` in its completion metrics.
   */
  ladder: z.strictObject({ mix: z.enum(['custom', 'reference']), data_refs: z.array(z.number().int().min(0).max(255)).max(256) }).optional(),
  /**
   * Rank 0's endpoint for this attempt's process group (every rank gets the same one; a re-planned attempt gets its
   * own, with its own world size). Null when the stage runs on one node or rank 0's agent offers no endpoint.
   */
  rendezvous: z.strictObject({ master_addr: rendezvousSchema.shape.addr, master_port: rendezvousSchema.shape.port }).nullable().optional(),
});
export type TaskSpec = z.infer<typeof taskSpecSchema>;

export const TASK_STATUSES = ['assigned', 'running', 'completed', 'failed', 'withdrawn'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const assignmentSchema = z.strictObject({
  task_id: taskIdSchema,
  run_id: runIdSchema,
  stage: z.enum(STAGE_NAMES),
  attempt,
  status: z.enum(TASK_STATUSES),
  /** The next sequence number the API expects for this task's reports (an agent that restarted resumes there). */
  next_seq: seq,
  directive: z.enum(DIRECTIVES),
  spec: taskSpecSchema,
});
export type Assignment = z.infer<typeof assignmentSchema>;

export interface AgentRegistration {
  node_id: string;
  booking_id: string;
  name: string;
  heartbeat_interval_s: number;
  heartbeat_misses: number;
  server_time: string;
}

export interface HeartbeatAnswer {
  interval_s: number;
  /** Tasks the agent said it runs that it must stop now (withdrawn, cancelled, superseded). */
  stop: Array<{ task_id: string; reason: string }>;
  directives: Array<{ task_id: string; directive: Directive }>;
}

/**
 * One beat of a batch, answered in the request's order: recorded (with what a single heartbeat answers), or
 * refused for its credential alone (`unauthenticated`, `credential_revoked`) while the others are recorded.
 */
export type BatchedBeatAnswer =
  | ({ ok: true; node_id: string } & Pick<HeartbeatAnswer, 'stop' | 'directives'>)
  | { ok: false; error: { code: 'unauthenticated' | 'credential_revoked'; message: string } };

export interface HeartbeatsAnswer {
  interval_s: number;
  beats: BatchedBeatAnswer[];
}

export interface AssignmentsAnswer {
  assignments: Assignment[];
}

export interface ReportAnswer {
  task_id: string;
  /** True when the report repeated one already recorded (same sequence number): nothing new was appended. */
  duplicate: boolean;
  directive: Directive;
}

/** How long `GET /v1/agent/assignments` holds a request open waiting for work. */
export const ASSIGNMENTS_MAX_WAIT_S = 30;
