import { PLAN_ASSUMPTIONS as A } from './assumptions.js';
import type { FabricSpec } from './catalog.js';
import type { ModelShape } from './model-shape.js';
import type { MemoryLayout } from './memory.js';

/**
 * Model FLOPs per trained token: 6N for the dense weights (forward 2N, backward 4N) plus causal attention,
 * 12·L·h·s halved because flash attention skips the masked half. The attention term is what makes long
 * context expensive: at 64k tokens it exceeds 6N for an 8B model.
 */
export function flopsPerToken(shape: ModelShape, sequenceLength: number): number {
  return 6 * shape.parameters + 6 * shape.layers * shape.hidden * sequenceLength;
}

export interface Topology {
  nodes: number;
  gpusPerNode: number;
  peakTflops: number;
  mfuBase: number;
  fabric: FabricSpec;
}

export interface StageLayout extends MemoryLayout {
  dp: number;
}

function penalty(perDoubling: number, degree: number): number {
  return 1 - perDoubling * Math.log2(degree);
}

/** MFU after the penalties that do not depend on the fabric: TP and CP communication, recompute. */
export function computeEfficiency(l: StageLayout): number {
  const recompute = l.recompute === 'full' ? A.fullRecomputeEfficiency : 1;
  return penalty(A.tpPenaltyPerDoubling, l.tp) * penalty(A.cpPenaltyPerDoubling, l.cp) * recompute;
}

/** 1F1B pipeline bubble: (pp − 1) idle slots per ga micro-batches. */
export function bubbleEfficiency(l: StageLayout): number {
  return l.gradientAccumulation / (l.gradientAccumulation + l.pp - 1);
}

/**
 * Bytes each GPU sends over the inter-node fabric per optimizer step. TP and CP stay inside a node (NVLink),
 * and PP stages span whole nodes, so only three flows cross the fabric: FSDP's parameter gathers and gradient
 * reduce-scatters when the shard group spans nodes (every micro-batch), the gradient all-reduce between
 * node-local replicas (once per step), and pipeline activations between stages.
 */
export function interNodeBytesPerStep(shape: ModelShape, l: StageLayout, t: Topology): number {
  if (t.nodes === 1) return 0;
  const nodesPerStage = t.nodes / l.pp;
  const paramsPerRank = shape.parameters / (l.tp * l.pp);
  let bytes = 0;
  if (nodesPerStage > 1) {
    if (l.shard === 'full') {
      const group = l.dpShard * l.cp;
      bytes += 3 * 2 * paramsPerRank * ((group - 1) / group) * l.gradientAccumulation;
    } else {
      const replicas = nodesPerStage;
      const shardParams = paramsPerRank / (l.dpShard * l.cp);
      bytes += 2 * ((replicas - 1) / replicas) * 2 * shardParams;
    }
  }
  if (l.pp > 1) {
    const tokensPerRank = (l.sequenceLength / l.cp) * l.microBatch;
    bytes += 2 * 2 * ((tokensPerRank * shape.hidden) / l.tp) * l.gradientAccumulation;
  }
  return bytes;
}

export interface StageSpeed {
  computeSecondsPerStep: number;
  commSecondsPerStep: number;
  fabricEfficiency: number;
  mfuEffective: number;
  tokensPerS: number;
}

export function stageSpeed(shape: ModelShape, l: StageLayout, t: Topology): StageSpeed {
  const gpus = t.nodes * t.gpusPerNode;
  const perToken = flopsPerToken(shape, l.sequenceLength);
  const tokensPerStep = l.dp * l.microBatch * l.gradientAccumulation * l.sequenceLength;
  const computeFlopsPerS = gpus * t.peakTflops * 1e12 * t.mfuBase * computeEfficiency(l) * bubbleEfficiency(l);
  const computeSecondsPerStep = (perToken * tokensPerStep) / computeFlopsPerS;
  const commSecondsPerStep = interNodeBytesPerStep(shape, l, t) / ((t.fabric.perGpuGbps * 1e9) / 8);
  const exposed = Math.max(0, commSecondsPerStep - A.commOverlapFraction * computeSecondsPerStep);
  const fabricEfficiency = computeSecondsPerStep / (computeSecondsPerStep + exposed);
  const mfuEffective = t.mfuBase * computeEfficiency(l) * bubbleEfficiency(l) * fabricEfficiency;
  const tokensPerS = (gpus * t.peakTflops * 1e12 * mfuEffective) / perToken;
  return { computeSecondsPerStep, commSecondsPerStep, fabricEfficiency, mfuEffective, tokensPerS };
}
