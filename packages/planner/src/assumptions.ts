/**
 * Every number the planner assumes, in one place, so a reviewer can read what a plan stands on. The plan's
 * `reasons` and `cost_breakdown` repeat the ones that shaped a given answer.
 */
export const PLAN_ASSUMPTIONS = {
  /** Bytes of model state per parameter with Adam: bf16 weights 2 + bf16 grads 2 + fp32 master 4 + m 4 + v 4. */
  stateBytesPerParamBf16: 16,
  /** FP8 keeps the bf16/fp32 state and adds a cached FP8 weight copy. */
  stateBytesPerParamFp8: 17,
  /** Bytes saved per parameter in a resumable checkpoint: bf16 weights, fp32 master, Adam m and v (no grads). */
  checkpointBytesPerParam: 14,
  /** Activation bytes per token per hidden unit per layer with selective recompute and flash attention. */
  activationBytesSelective: 34,
  /** Full recompute keeps only each layer's bf16 input. */
  activationBytesFullRecompute: 2,
  /** Logits in bf16 plus the fp32 copy the loss needs. */
  logitBytesPerToken: 6,
  /** Share of GPU memory the planner lets itself use, and what it keeps back for CUDA context and NCCL. */
  usableMemoryFraction: 0.9,
  reservedMemoryGb: 2,
  /** Model FLOPs utilisation before penalties: bf16 of the bf16 peak, fp8 of the fp8 peak (≈1.5× bf16 speed). */
  mfuBf16: 0.4,
  mfuFp8: 0.3,
  /** Models below this stay in bf16: their GEMMs are too small for FP8 scaling to pay for itself. */
  fp8MinParameters: 1e9,
  /** Relative MFU lost per doubling of TP (communication on every layer) and of CP (ring attention). */
  tpPenaltyPerDoubling: 0.04,
  cpPenaltyPerDoubling: 0.03,
  /** Full recompute runs the forward twice: 8N instead of 6N FLOPs per token. */
  fullRecomputeEfficiency: 0.75,
  /** Context parallelism only for sequences longer than this per rank. */
  cpMinTokensPerRank: 8192,
  /** Upper bound on tokens in one micro-batch: beyond it GEMMs are saturated and memory is wasted. */
  maxMicroBatchTokens: 16384,
  /** Share of compute time behind which communication hides; the rest stalls the step. */
  commOverlapFraction: 0.8,
  /** Below this fabric efficiency a multi-node plan is refused as fabric_unsupported. */
  minFabricEfficiency: 0.8,
  /** Share of the target tokens trained at long_context_length when the curriculum has long_context. */
  longContextTokenFraction: 0.05,
  /** Post-training data whose size the manifest does not state, as a share of the target tokens. */
  unknownPostTrainingDataFraction: 0.01,
  /** DPO runs a frozen reference forward (2N) beside the policy's 6N per token. */
  dpoComputeFactor: 8 / 6,
  /** RLVR (GRPO) compute, rollouts included, as training-equivalent tokens: a share of the target tokens. */
  rlvrTokenFraction: 0.02,
  /** Checkpoint writes: host copy for async saves, storage bandwidth per node for blocking ones (GB/s). */
  hostCopyGbPerS: 20,
  storageWriteGbPerSPerNode: 2,
  /** Object storage price, egress price, and what leaves at the end: the final checkpoint. */
  storageUsdPerGbMonth: 0.023,
  egressUsdPerGb: 0.09,
  hoursPerMonth: 730,
} as const;

/** Vocabulary size by model family (the logits are a large share of activation memory). */
const VOCAB_BY_FAMILY: Record<string, number> = { llama: 128_256, qwen: 151_936, mistral: 32_768, gemma: 256_000 };
const DEFAULT_VOCAB = 128_000;

export function vocabularyFor(family: string): number {
  return Object.hasOwn(VOCAB_BY_FAMILY, family) ? VOCAB_BY_FAMILY[family]! : DEFAULT_VOCAB;
}

/**
 * Tokens per optimizer step the planner aims for: ~4M for 7B and up, scaled down for smaller models, which
 * stop gaining from larger batches sooner (their critical batch size is smaller).
 */
export function referenceBatchTokens(parameters: number): number {
  if (parameters >= 7e9) return 4 * 1024 * 1024;
  if (parameters >= 1e9) return 2 * 1024 * 1024;
  if (parameters >= 3e8) return 1024 * 1024;
  return 512 * 1024;
}
