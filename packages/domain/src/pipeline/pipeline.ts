import {
  CURRICULUM_STAGES,
  TRAINING_STAGES,
  evalStageFor,
  stageKind,
  type CurriculumStage,
  type GatedStage,
  type Manifest,
  type StageKind,
  type StageName,
} from '@ito/contracts';
import { DEFAULT_LADDER_RULE, customDataRefs, type LadderRule } from './ladder.js';

/** A gate's bounds on one metric, as the manifest states them. */
export interface GateBound {
  min?: number;
  max?: number;
}

export interface PipelineStep {
  stage: StageName;
  kind: StageKind;
  /** Tokens the stage trains; 0 for data prep, planning and evaluation. */
  tokens: number;
  sequence_length: number;
  /** Evaluation stages: the metrics the battery reports and the bounds the gated stage must meet. */
  metrics?: string[];
  gates?: Record<string, GateBound>;
  /** Post-training steps: the recipe step's options as the manifest states them. */
  recipe?: Record<string, string | number | boolean>;
  /** Ladder proxy steps: the mix the proxy trains on and the custom data refs. */
  ladder?: { mix: 'custom' | 'reference'; data_refs: number[] };
}

/** The loss-spike rule: loss above `factor` × its moving average for `consecutive` reports, after a warm-up. */
export interface LossSpikeRule {
  factor: number;
  consecutive: number;
  warmup_reports: number;
  /** Weight of the newest loss in the exponential moving average. */
  ema_alpha: number;
}

export interface Pipeline {
  steps: PipelineStep[];
  model: { family: string; parameters: number };
  eval_battery: string;
  checkpoint: { storage: string; interval_minutes: number; keep_last: number; async: boolean };
  budget: { ceiling_usd: number; max_incremental_cost_usd: number };
  /** What a node-second costs: the booking's rate for each of a node's GPUs. */
  cost: { rate_usd_per_gpu_hour: number; gpus_per_node: number };
  /** `ladder` is set only when the data has a custom mix (pipelines planned before it existed have none). */
  rules: { loss_spike: LossSpikeRule; max_stage_attempts: number; ladder?: LadderRule };
}

export const DEFAULT_LOSS_SPIKE_RULE: LossSpikeRule = { factor: 2.5, consecutive: 3, warmup_reports: 5, ema_alpha: 0.1 };
/** A stage attempt whose task fails is retried from its last checkpoint; after this many the run fails. */
export const MAX_STAGE_ATTEMPTS = 3;

/**
 * The metrics each known battery reports. A gate may name only metrics its battery reports (or the run fails
 * the gate for lack of the metric, which is the safe way to fail).
 */
export const EVAL_BATTERIES: Record<string, string[]> = {
  'ito-evals/v1': ['heldout_loss', 'mmlu', 'humaneval', 'ifeval', 'gsm8k', 'ruler_32k'],
};

/** The planner's token phases, as plain data (the domain does not import the planner). */
export interface TokenPhaseInput {
  phase: string;
  tokens: number;
  sequence_length: number;
}

function metricsFor(battery: string, gates: Record<string, GateBound>): string[] {
  const known = Object.hasOwn(EVAL_BATTERIES, battery) ? EVAL_BATTERIES[battery]! : [];
  return [...new Set([...known, ...Object.keys(gates)])];
}

/**
 * The stages of a run, in order: data prep, planning, each curriculum stage followed by its evaluation, the
 * post-training recipe's steps, the post-training evaluation. Pure: the same manifest and phases always give
 * the same pipeline. Stages that share a planner phase (pretrain+mid_train) share its tokens evenly.
 */
export function buildPipeline(
  manifest: Manifest,
  phases: TokenPhaseInput[],
  booking: { rate_usd_per_gpu_hour: number; gpus_per_node: number },
  parameters: number,
): Pipeline {
  const steps: PipelineStep[] = [
    { stage: 'data_prep', kind: 'data_prep', tokens: 0, sequence_length: 0 },
    { stage: 'planning', kind: 'planning', tokens: 0, sequence_length: 0 },
  ];
  // Custom data: the 150M-ladder proxies run after planning and before any large stage.
  const custom = customDataRefs(manifest);
  if (custom.length > 0) {
    for (const mix of ['custom', 'reference'] as const) {
      steps.push({ stage: `ladder_${mix}`, kind: 'ladder', tokens: DEFAULT_LADDER_RULE.proxy_tokens, sequence_length: manifest.target.sequence_length, ladder: { mix, data_refs: custom } });
    }
  }
  const gatesOf = (stage: GatedStage) => (manifest.eval.gates[stage] ?? {}) as Record<string, GateBound>;
  const evalStep = (stage: GatedStage): PipelineStep => ({
    stage: evalStageFor(stage),
    kind: 'eval',
    tokens: 0,
    sequence_length: manifest.target.sequence_length,
    metrics: metricsFor(manifest.eval.battery, gatesOf(stage)),
    gates: gatesOf(stage),
  });

  for (const stage of CURRICULUM_STAGES) {
    if (!manifest.target.curriculum.includes(stage)) continue;
    if ((TRAINING_STAGES as readonly string[]).includes(stage)) {
      const phase = phases.find((p) => p.phase.split('+').includes(stage));
      const share = phase ? phase.phase.split('+').length : 1;
      steps.push({
        stage: stage as StageName,
        kind: 'train',
        tokens: phase ? Math.round(phase.tokens / share) : 0,
        sequence_length: phase?.sequence_length ?? manifest.target.sequence_length,
      });
    } else {
      for (const step of manifest.post_training.recipe) {
        const phase = phases.find((p) => p.phase === step.stage);
        const { stage: name, ...options } = step;
        steps.push({
          stage: name,
          kind: stageKind(name),
          tokens: phase?.tokens ?? 0,
          sequence_length: phase?.sequence_length ?? manifest.target.sequence_length,
          recipe: options as Record<string, string | number | boolean>,
        });
        // A step the manifest gates is evaluated right after it, as a curriculum stage is.
        if (Object.hasOwn(manifest.eval.gates, name)) steps.push(evalStep(name));
      }
    }
    steps.push(evalStep(stage));
  }

  return {
    steps,
    model: { family: manifest.model.family, parameters },
    eval_battery: manifest.eval.battery,
    checkpoint: { ...manifest.checkpoint },
    budget: { ...manifest.budget },
    cost: { rate_usd_per_gpu_hour: booking.rate_usd_per_gpu_hour, gpus_per_node: booking.gpus_per_node },
    rules: { loss_spike: DEFAULT_LOSS_SPIKE_RULE, max_stage_attempts: MAX_STAGE_ATTEMPTS, ...(custom.length > 0 ? { ladder: DEFAULT_LADDER_RULE } : {}) },
  };
}

export function stepIndexOf(pipeline: Pipeline, stage: string): number {
  return pipeline.steps.findIndex((s) => s.stage === stage);
}
