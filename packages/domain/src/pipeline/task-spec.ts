import { createHash } from 'node:crypto';
import { ItoError, stageKind, type StageName, type TaskSpec } from '@ito/contracts';
import type { CheckpointRef, TaskRef } from '../run/run-events.js';
import type { RunAggregate } from '../run/run-state.js';
import type { StageResume } from './next-commands.js';
import { roleOfRank, rolloutNodesFor } from './rollout-exchange.js';

export type SharedSpec = Omit<TaskSpec, 'rank' | 'role'>;

/** Deterministic: the same run, stage, attempt and rank always name the same task, so a retried job makes no new one. */
export function taskIdFor(runId: string, stage: string, attempt: number, rank: number): string {
  return `tsk_${createHash('sha256').update(`${runId}:${stage}:${attempt}:${rank}`).digest('hex').slice(0, 32)}`;
}

/** A checkpoint's id from the report that recorded it: a resent report names the same checkpoint. */
export function checkpointIdFor(taskId: string, seq: number): string {
  return `ckpt_${createHash('sha256').update(`${taskId}:${seq}`).digest('hex').slice(0, 32)}`;
}

/** How many nodes a stage's tasks take: training and post-training hold every planned node, evaluation one. */
export function nodesFor(state: RunAggregate, stage: StageName): number {
  if (stageKind(stage) === 'eval' || stageKind(stage) === 'ladder') return 1;
  return state.plan?.nodes ?? 1;
}

/**
 * One task per node, rank by the order the nodes are given in. RLVR's last `rolloutNodes` ranks roll out and the
 * others train (rank 0 always trains and speaks for the stage); every other stage's tasks train or evaluate.
 */
export function assignTasks(runId: string, stage: StageName, attempt: number, nodeIds: string[], rolloutNodes = 0): TaskRef[] {
  const rollout = stageKind(stage) === 'eval' ? 0 : Math.max(0, Math.min(rolloutNodes, nodeIds.length - 1));
  return nodeIds.map((node_id, rank) => ({ task_id: taskIdFor(runId, stage, attempt, rank), node_id, rank, role: roleOfRank(stage, rank, nodeIds.length, rollout) }));
}

/**
 * The spec every task of a stage attempt shares, from the pipeline, the live plan and where the attempt starts.
 * Steps are the stage's tokens over the tokens of one optimizer step (global batch × sequence length).
 */
export function buildStageSpec(state: RunAggregate, stage: StageName, attempt: number, resume: StageResume | null, worldSize: number): SharedSpec {
  const pipeline = state.pipeline;
  const plan = state.plan;
  const step = pipeline?.steps.find((s) => s.stage === stage);
  if (!pipeline || !plan || !step || !state.runId) throw new ItoError('invalid_state', `stage ${stage} cannot start before the run is planned`);
  const layout =
    plan.layouts.find((l) => l.sequence_length === step.sequence_length) ??
    [...plan.layouts].sort((a, b) => Math.abs(a.sequence_length - step.sequence_length) - Math.abs(b.sequence_length - step.sequence_length))[0];
  if (!layout) throw new ItoError('invalid_state', `the plan has no layout for stage ${stage}`);
  const kind = stageKind(stage);
  if (kind === 'data_prep' || kind === 'planning') throw new ItoError('invalid_state', `stage ${stage} runs in the workers, not on nodes`);
  const stepTokens = layout.global_batch_sequences * layout.sequence_length;
  const totalSteps = kind === 'eval' ? 0 : Math.max(1, Math.ceil(step.tokens / stepTokens));
  // A ladder proxy is a 150M model of the run's family: it trains faster than the planned model by their ratio.
  const proxy = kind === 'ladder' ? (pipeline.rules.ladder?.proxy_parameters ?? plan.parameters) : null;
  // A ladder proxy's weights are a different, small model: no stage starts from them.
  const previous = state.checkpoints.filter((c) => c.stage !== stage && !c.stage?.startsWith('ladder_')).at(-1);
  const initFrom: CheckpointRef | null = previous ? { checkpoint_id: previous.checkpoint_id, uri: previous.uri, step: previous.step } : null;
  return {
    run_id: state.runId,
    stage,
    kind,
    attempt,
    world_size: worldSize,
    model: { family: plan.family, parameters: proxy ?? plan.parameters, precision: plan.precision },
    layout: { tp: layout.tp, pp: layout.pp, dp: layout.dp, cp: layout.cp, micro_batch: layout.micro_batch, global_batch_sequences: layout.global_batch_sequences },
    sequence_length: layout.sequence_length,
    tokens: step.tokens,
    step_tokens: stepTokens,
    total_steps: totalSteps,
    planned_tokens_per_s: proxy ? layout.tokens_per_s * Math.max(1, plan.parameters / proxy) : layout.tokens_per_s,
    start_step: resume?.from?.step ?? 0,
    resume_from: resume?.from ?? null,
    init_from: kind === 'ladder' ? null : initFrom,
    skip_steps: resume?.skip_steps ?? null,
    checkpoint: {
      storage: pipeline.checkpoint.storage.replace(/\/+$/, ''),
      interval_minutes: pipeline.checkpoint.interval_minutes,
      async: pipeline.checkpoint.async,
      modelled_bytes: plan.checkpoint_bytes,
    },
    eval: kind === 'eval' ? { battery: pipeline.eval_battery, metrics: step.metrics ?? [] } : null,
    recipe: step.recipe ?? null,
    // The same split `assignTasks` makes: with no rollout rank, the rank-0 trainer samples its own batches.
    ...(stage === 'rlvr' ? { rollout: rolloutNodesFor(state, stage, worldSize) > 0 ? ('separate' as const) : ('colocated' as const) } : {}),
    ...(step.ladder ? { ladder: step.ladder } : {}),
  };
}
