import type { CurriculumStage } from './run-state.js';

/**
 * The stages a run goes through, in the order the pipeline may schedule them. Data prep and planning run in
 * the workers; training, post-training and evaluation stages run on the booking's node agents.
 */
export const POST_TRAINING_STEPS = ['sft', 'dpo', 'rlvr'] as const;
export type PostTrainingStep = (typeof POST_TRAINING_STEPS)[number];

export const TRAINING_STAGES = ['pretrain', 'mid_train', 'long_context'] as const;
export type TrainingStage = (typeof TRAINING_STAGES)[number];

/**
 * What a gate can follow: each curriculum stage, and each post-training step that has gates of its own.
 */
export const GATED_STAGES = ['pretrain', 'mid_train', 'long_context', 'sft', 'dpo', 'rlvr', 'post_training'] as const;
export type GatedStage = CurriculumStage | PostTrainingStep;

/**
 * An evaluation stage follows each curriculum stage (`eval_pretrain`, …, `eval_post_training`), and each
 * post-training step the manifest gates (`eval_sft`, `eval_dpo`, `eval_rlvr`).
 */
export type EvalStage = `eval_${GatedStage}`;

/**
 * The 150M-ladder pre-check of custom data: two short proxy runs of a 150M-parameter model, one on the custom mix
 * and one on the reference mix, before any large stage.
 */
export const LADDER_STAGES = ['ladder_custom', 'ladder_reference'] as const;
export type LadderStage = (typeof LADDER_STAGES)[number];

export type StageName = 'data_prep' | 'planning' | LadderStage | TrainingStage | PostTrainingStep | EvalStage;

export const STAGE_NAMES = [
  'data_prep',
  'planning',
  'ladder_custom',
  'ladder_reference',
  'pretrain',
  'eval_pretrain',
  'mid_train',
  'eval_mid_train',
  'long_context',
  'eval_long_context',
  'sft',
  'eval_sft',
  'dpo',
  'eval_dpo',
  'rlvr',
  'eval_rlvr',
  'eval_post_training',
] as const satisfies readonly StageName[];

/** Where a stage's work is done, and so what kind of task (if any) an agent receives for it. */
export type StageKind = 'data_prep' | 'planning' | 'ladder' | 'train' | 'post_train' | 'eval';

export function stageKind(stage: StageName): StageKind {
  if (stage === 'data_prep' || stage === 'planning') return stage;
  if (stage.startsWith('eval_')) return 'eval';
  if ((LADDER_STAGES as readonly string[]).includes(stage)) return 'ladder';
  return (POST_TRAINING_STEPS as readonly string[]).includes(stage) ? 'post_train' : 'train';
}

export function evalStageFor(stage: GatedStage): EvalStage {
  return `eval_${stage}`;
}

/** The stage an evaluation stage gates. */
export function gatedStageOf(stage: EvalStage): GatedStage {
  return stage.slice('eval_'.length) as GatedStage;
}
