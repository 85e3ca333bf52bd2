import { checkpointBody, completeBody, policyBody, progressBody, restoredBody, rolloutBatchBody } from '@ito/contracts';
import { z } from 'zod';

/**
 * The JSON-lines protocol between the process executor and a trainer (docs/trainer-protocol.md). A trainer writes
 * one object per line on stdout; the agent writes control lines on its stdin. The fields are those of the agent's
 * reports to the API, without the attempt and sequence number the agent adds.
 */
export const TRAINER_PROTOCOL = 'ito.trainer/v1';

/** Longest stdout line read; a longer one is counted and dropped unread. */
export const MAX_TRAINER_LINE_BYTES = 64 * 1024;

export const progressLine = progressBody.omit({ attempt: true, seq: true }).extend({ type: z.literal('progress') });
export const checkpointLine = checkpointBody.omit({ attempt: true, seq: true, simulated: true }).extend({ type: z.literal('checkpoint') });
/**
 * A checkpoint the trainer wrote to a file of its own task directory (`ITO_WORK_DIR`): the agent uploads it to the
 * run's storage and reports it once uploaded. `path` is relative to that directory (or absolute inside it).
 */
export const checkpointFileLine = checkpointBody
  .pick({ step: true, save_seconds: true, async: true, final: true, elapsed_s: true })
  .extend({ type: z.literal('checkpoint_file'), path: z.string().min(1).max(1024) });
/** The agent adds the checkpoint id: it is the spec's `resume_from`, which the trainer restored. */
export const restoredLine = restoredBody.omit({ attempt: true, seq: true, checkpoint_id: true }).extend({ type: z.literal('restored') });
export const metricsLine = completeBody.pick({ step: true }).extend({ type: z.literal('metrics'), metrics: completeBody.shape.metrics.unwrap() });
export const logLine = z.strictObject({ type: z.literal('log'), message: z.string().max(2048) });

/** RLVR (docs/trainer-protocol.md, "RLVR"): the exchange with the other role, each answered by one stdin line. */
export const rolloutBatchLine = rolloutBatchBody.omit({ attempt: true, seq: true }).extend({ type: z.literal('rollout_batch') });
export const policyLine = policyBody.omit({ attempt: true }).extend({ type: z.literal('policy') });
export const wantBatchesLine = z.strictObject({
  type: z.literal('want_batches'),
  policy_version: z.number().int().min(0).max(1_000_000_000),
  wait_s: z.number().int().min(0).max(30),
  max: z.number().int().min(1).max(4),
});

export const trainerLineSchema = z.discriminatedUnion('type', [progressLine, checkpointLine, checkpointFileLine, restoredLine, metricsLine, logLine, rolloutBatchLine, policyLine, wantBatchesLine]);
export type RolloutBatchLine = z.infer<typeof rolloutBatchLine>;
export type TrainerLine = z.infer<typeof trainerLineSchema>;
export type ProgressLine = z.infer<typeof progressLine>;
export type CheckpointLine = z.infer<typeof checkpointLine>;
export type CheckpointFileLine = z.infer<typeof checkpointFileLine>;
export type MetricsLine = z.infer<typeof metricsLine>;

/** What the agent sends on a trainer's stdin. */
export const controlLineSchema = z.strictObject({ type: z.literal('stop'), checkpoint: z.boolean() });
export type ControlLine = z.infer<typeof controlLineSchema>;

/** The agent's answers to the RLVR lines, in the order the requests were made (one at a time). */
export interface ExchangeReply {
  type: 'rollout_ack' | 'policy_ack' | 'batches' | 'exchange_refused';
  [key: string]: unknown;
}
/** Longest stdin line a trainer reads: a poll's answer carries up to 4 batches. */
export const MAX_CONTROL_LINE_BYTES = 8 * 1024 * 1024;
