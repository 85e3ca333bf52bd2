import { gatedStageOf, type EvalStage, type TaskSpec } from '@ito/contracts';

/**
 * The simulated executor's model of a training job: how long things take and what the numbers are. Pure and
 * deterministic, so that the same spec always tells the same story (tests, demos and the fleet benchmark rely
 * on it). Nothing here is measured; every constant is stated.
 */

export interface BandwidthModel {
  /**
   * What one node writes to checkpoint storage; a checkpoint is sharded over the task's nodes.
   * @defaultValue 2 GB/s
   */
  storageBytesPerSPerNode: number;
  /**
   * Device-to-host copy rate; an async save stalls training only for this copy.
   * @defaultValue 20 GB/s
   */
  hostCopyBytesPerSPerNode: number;
}

export const DEFAULT_BANDWIDTH: BandwidthModel = { storageBytesPerSPerNode: 2e9, hostCopyBytesPerSPerNode: 20e9 };

/** Seconds of one optimizer step: its tokens at the planner's throughput for the whole job. */
export function stepSeconds(spec: Pick<TaskSpec, 'step_tokens' | 'planned_tokens_per_s'>): number {
  return spec.step_tokens / spec.planned_tokens_per_s;
}

export interface CheckpointTiming {
  /** Seconds until the checkpoint is fully written. */
  save_seconds: number;
  /** Seconds training stands still for it: the host copy when async, the whole write when not. */
  stall_seconds: number;
}

export function checkpointTiming(bytes: number, worldSize: number, async: boolean, bandwidth: BandwidthModel, slowFactor = 1): CheckpointTiming {
  const nodes = Math.max(1, worldSize);
  const save = (bytes / (nodes * bandwidth.storageBytesPerSPerNode)) * slowFactor;
  return { save_seconds: save, stall_seconds: async ? Math.min(save, bytes / (nodes * bandwidth.hostCopyBytesPerSPerNode)) : save };
}

/** Seconds to read a checkpoint back, sharded over the task's nodes: storage is read at the rate it is written. */
export function restoreSeconds(bytes: number, worldSize: number, bandwidth: BandwidthModel): number {
  return bytes / (Math.max(1, worldSize) * bandwidth.storageBytesPerSPerNode);
}

/**
 * Loss of a model of N parameters that has seen D tokens, in the parametric form and with the fitted constants
 * of the 2022 "Chinchilla" compute-optimal study (its third approach): L = 1.69 + 406.4 / N^0.34 + 410.7 / D^0.28.
 */
export function scalingLoss(parameters: number, tokens: number): number {
  const n = Math.max(1e6, parameters);
  const d = Math.max(1e6, tokens);
  return 1.69 + 406.4 / n ** 0.34 + 410.7 / d ** 0.28;
}

/** Runs continue from a pretrained base model, assumed to have seen this many tokens already. */
export const BASE_MODEL_TOKENS = 1e12;

/**
 * The training loss reported at `tokens` into a stage: the scaling loss plus a transient for the new data mix,
 * 0.5 nats at the stage's start, decaying as (1 + tokens / 2e8)^-1/2. It falls monotonically with the stage's
 * global token count (tokens of the whole job, every rank), so a resumed task continues the same curve.
 */
export function trainingLoss(parameters: number, tokens: number): number {
  return scalingLoss(parameters, BASE_MODEL_TOKENS + tokens) + 0.5 / Math.sqrt(1 + tokens / 2e8);
}

/** How one accuracy-like metric of the battery responds to ability (see {@link evalMetrics}). */
interface ScoreModel {
  chance: number;
  ceiling: number;
  difficulty: number;
  bonus: Partial<Record<'mid_train' | 'long_context' | 'post_training', number>>;
}

export const BATTERY_MODEL: Record<string, ScoreModel> = {
  mmlu: { chance: 0.25, ceiling: 0.9, difficulty: 1.2, bonus: { mid_train: 0.2, post_training: 0.05 } },
  humaneval: { chance: 0, ceiling: 0.9, difficulty: 1.4, bonus: { mid_train: 0.3, post_training: 0.3 } },
  gsm8k: { chance: 0, ceiling: 0.9, difficulty: 1.5, bonus: { mid_train: 0.2, post_training: 0.4 } },
  ifeval: { chance: 0.1, ceiling: 0.9, difficulty: 1.6, bonus: { post_training: 0.8 } },
  ruler_32k: { chance: 0, ceiling: 0.95, difficulty: 1.3, bonus: { long_context: 0.6 } },
};

const UNKNOWN_METRIC_SCORE = 0.25;
const CURRICULUM_ORDER = ['pretrain', 'mid_train', 'long_context', 'post_training'] as const;

/**
 * The evaluation battery's model. The evaluated checkpoint (`init_from`) has trained `step × step_tokens` tokens
 * of its stage, so its held-out loss is `scalingLoss(N, BASE_MODEL_TOKENS + those tokens)`. Accuracy-like scores
 * rise with an ability `a = (2.6 − heldout_loss) / 0.5` plus what the stages done so far add for that metric
 * (the curriculum is taken to have run in order up to the gated stage; post-training counts once):
 *
 *   score = chance + (ceiling − chance) × sigmoid((a + bonus − difficulty) / 0.25)
 *
 * For an 8B model this gives heldout_loss ≈ 2.04, mmlu ≈ 0.65 and humaneval ≈ 0.46 after mid-training,
 * ruler_32k ≈ 0.80 after long-context training, humaneval ≈ 0.70 and ifeval ≈ 0.72 after post-training; no score
 * reaches its ceiling, so a gate above it always fails. Metrics this model does not know score as chance (0.25).
 */
export function evalMetrics(spec: Pick<TaskSpec, 'stage' | 'model' | 'init_from' | 'step_tokens' | 'eval'>): Record<string, number> {
  const trained = (spec.init_from?.step ?? 0) * spec.step_tokens;
  const heldout = scalingLoss(spec.model.parameters, BASE_MODEL_TOKENS + trained);
  const gatedAny = spec.stage.startsWith('eval_') ? gatedStageOf(spec.stage as EvalStage) : 'pretrain';
  // A post-training step's own evaluation counts as post-training.
  const gated = gatedAny === 'sft' || gatedAny === 'dpo' || gatedAny === 'rlvr' ? 'post_training' : gatedAny;
  const done = CURRICULUM_ORDER.slice(0, CURRICULUM_ORDER.indexOf(gated) + 1);
  const ability = (2.6 - heldout) / 0.5;
  const metrics: Record<string, number> = {};
  for (const name of spec.eval?.metrics ?? []) {
    if (name === 'heldout_loss') {
      metrics[name] = round(heldout);
      continue;
    }
    const model = Object.hasOwn(BATTERY_MODEL, name) ? BATTERY_MODEL[name]! : null;
    if (!model) {
      metrics[name] = UNKNOWN_METRIC_SCORE;
      continue;
    }
    const bonus = done.reduce((sum, stage) => sum + (stage === 'pretrain' ? 0 : (model.bonus[stage] ?? 0)), 0);
    metrics[name] = round(model.chance + (model.ceiling - model.chance) * sigmoid((ability + bonus - model.difficulty) / 0.25));
  }
  return metrics;
}

/** Tokens the battery reads; evaluation is forward-only, taken as three times the training throughput. */
export const BATTERY_TOKENS = 5e7;

/**
 * The custom mix's proxy loss relative to the reference mix's when nothing says otherwise: 0.5 % worse, inside the
 * ladder's 2 % tolerance (a `proxy_loss` fault moves it).
 */
export const CUSTOM_MIX_LOSS_RATIO = 1.005;

/**
 * A 150M-ladder proxy: the scaling loss of the proxy model after its tokens, times the mix's ratio (1 for the
 * reference mix), as `proxy_eval_loss`. Its time is its tokens at the proxy's throughput.
 */
export function proxyEvalLoss(spec: Pick<TaskSpec, 'model' | 'tokens' | 'ladder'>, customFactor = 1): number {
  const ratio = spec.ladder?.mix === 'custom' ? CUSTOM_MIX_LOSS_RATIO * customFactor : 1;
  return round(scalingLoss(spec.model.parameters, spec.tokens) * ratio);
}

export function proxySeconds(spec: Pick<TaskSpec, 'tokens' | 'planned_tokens_per_s'>): number {
  return spec.tokens / spec.planned_tokens_per_s;
}

export function evalSeconds(spec: Pick<TaskSpec, 'planned_tokens_per_s'>): number {
  return BATTERY_TOKENS / (3 * spec.planned_tokens_per_s);
}

function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

function round(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}
