import { PLAN_ASSUMPTIONS as A } from './assumptions.js';
import type { ModelShape } from './model-shape.js';
import type { FsdpShard, Precision, Recompute } from './types.js';

export interface MemoryLayout {
  tp: number;
  pp: number;
  cp: number;
  /** Data-parallel ranks FSDP shards the model state across (1 = no sharding). */
  dpShard: number;
  shard: FsdpShard;
  microBatch: number;
  gradientAccumulation: number;
  sequenceLength: number;
  recompute: Recompute;
  precision: Precision;
}

export interface MemoryEstimate {
  modelStatesGb: number;
  gatheredParamsGb: number;
  activationsGb: number;
  logitsGb: number;
  totalGb: number;
}

const GB = 1e9;

/**
 * Per-GPU memory of one layout, for the busiest rank: the first pipeline stage (it holds the most in-flight
 * micro-batches) charged with the last stage's logits as well, which errs on the safe side.
 */
export function estimateMemory(shape: ModelShape, m: MemoryLayout): MemoryEstimate {
  const stateBytes = m.precision === 'fp8' ? A.stateBytesPerParamFp8 : A.stateBytesPerParamBf16;
  const modelParallel = m.tp * m.pp;
  // FSDP shards over the data-parallel ranks and the context-parallel ranks (they hold identical weights).
  const stateShards = modelParallel * m.dpShard * m.cp;
  const modelStates = (stateBytes * shape.parameters) / stateShards;

  // A sharded model gathers one layer and prefetches the next: bf16 weights and bf16 grads of two layers.
  const layerParams = shape.parameters / shape.layers / m.tp;
  const gatheredParams = m.dpShard * m.cp > 1 ? 2 * (2 + 2) * layerParams : 0;

  const tokensPerRank = (m.sequenceLength / m.cp) * m.microBatch;
  const perLayerBytes = (bytes: number): number => (bytes * tokensPerRank * shape.hidden) / m.tp;
  const layersPerStage = shape.layers / m.pp;
  // 1F1B: the first stage keeps up to pp micro-batches in flight.
  const inFlight = Math.min(m.pp, m.gradientAccumulation);
  const activations =
    m.recompute === 'selective'
      ? perLayerBytes(A.activationBytesSelective) * layersPerStage * inFlight
      : perLayerBytes(A.activationBytesFullRecompute) * layersPerStage * inFlight + perLayerBytes(A.activationBytesSelective);

  const logits = (tokensPerRank * shape.vocabulary * A.logitBytesPerToken) / m.tp;

  const total = modelStates + gatheredParams + activations + logits;
  return {
    modelStatesGb: modelStates / GB,
    gatheredParamsGb: gatheredParams / GB,
    activationsGb: activations / GB,
    logitsGb: logits / GB,
    totalGb: total / GB,
  };
}

export function usableMemoryGb(gpuMemoryGb: number): number {
  return gpuMemoryGb * A.usableMemoryFraction - A.reservedMemoryGb;
}
