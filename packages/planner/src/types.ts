import type { Manifest } from '@ito/contracts';

export interface BookingTopology {
  gpu: string;
  nodes: number;
  gpusPerNode: number;
  fabric: string;
  region: string;
  rateUsdPerGpuHour: number;
  termStart: Date;
  termEnd: Date;
}

export interface PlanInput {
  manifest: Manifest;
  booking: BookingTopology;
  /** The clock, passed in: the planner never reads it. */
  now: Date;
}

export type Precision = 'bf16' | 'fp8';
export type Recompute = 'selective' | 'full';
/** `node`: FSDP shards inside a node and replicates across nodes (HSDP); `full`: shards across every DP rank. */
export type FsdpShard = 'none' | 'node' | 'full';

/** Degrees and memory for one sequence length (the main stages, or the long-context stage). */
export interface StagePlan {
  stages: string[];
  sequence_length: number;
  tp: number;
  pp: number;
  dp: number;
  cp: number;
  fsdp: boolean;
  fsdp_shard: FsdpShard;
  recompute: Recompute;
  micro_batch: number;
  global_batch_sequences: number;
  gradient_accumulation: number;
  memory_per_gpu_gb: number;
  /** Communication hidden behind compute: 1 means the fabric never stalls a step. */
  fabric_efficiency: number;
  /** MFU after TP/CP, recompute, pipeline-bubble and fabric penalties. */
  mfu_effective: number;
  tokens_per_s: number;
}

/** A span of training tokens at one stage plan: pretraining, long context, each post-training stage. */
export interface PlanPhase {
  phase: string;
  sequence_length: number;
  /** Training-equivalent tokens (post-training stages carry their compute factors). */
  tokens: number;
  tokens_per_s: number;
  hours: number;
}

/** The layout fields the headline plan repeats from its main stage plan. */
export type StageLayout = Pick<
  StagePlan,
  'tp' | 'pp' | 'dp' | 'cp' | 'fsdp' | 'fsdp_shard' | 'recompute' | 'micro_batch' | 'global_batch_sequences' | 'gradient_accumulation' | 'memory_per_gpu_gb'
>;

/** How a post-training step uses the booking's nodes: RLVR may give some of them to rollout. */
export interface PostTrainingPlacement {
  stage: 'sft' | 'dpo' | 'rlvr';
  trainer_nodes: number;
  rollout_nodes: number;
  separated: boolean;
}

export interface Plan extends StageLayout {
  precision: Precision;
  gpu_memory_gb: number;
  /** Base MFU assumed for the precision (see PLAN_ASSUMPTIONS); penalties are in `stage_plans`. */
  mfu_assumption: number;
  tokens_per_s: number;
  estimated_hours: number;
  gpu_hours: number;
  gpus: number;
  parameters: number;
  stage_plans: StagePlan[];
  phases: PlanPhase[];
  /** The post-training steps' trainer/rollout split (empty without post-training). */
  post_training: PostTrainingPlacement[];
  /** Why each choice was made, in plain sentences. */
  reasons: string[];
}

export interface CostBreakdown {
  gpus: number;
  gpu_hours: number;
  rate_usd_per_gpu_hour: number;
  compute_usd: number;
  checkpoint_size_gb: number;
  checkpoints_kept: number;
  storage_usd_per_gb_month: number;
  run_months: number;
  checkpoint_storage_usd: number;
  egress_gb: number;
  egress_usd_per_gb: number;
  egress_usd: number;
  egress_what: string;
}

export type PlanRefusalCode = 'plan_refused' | 'capacity_insufficient' | 'fabric_unsupported';

export type PlanResult =
  | {
      ok: true;
      plan: Plan;
      estimated_cost_usd: number;
      incremental_cost_usd: number;
      estimated_hours: number;
      cost_breakdown: CostBreakdown;
    }
  | { ok: false; code: PlanRefusalCode; reason: string };
