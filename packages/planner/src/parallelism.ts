import { PLAN_ASSUMPTIONS as A, referenceBatchTokens } from './assumptions.js';
import type { GpuSpec } from './catalog.js';
import { estimateMemory, usableMemoryGb, type MemoryEstimate } from './memory.js';
import type { ModelShape } from './model-shape.js';
import { stageSpeed, type StageLayout, type StageSpeed, type Topology } from './throughput.js';
import type { FsdpShard, PlanRefusalCode, Precision, Recompute, StagePlan } from './types.js';

export interface StageRequest {
  stages: string[];
  sequenceLength: number;
  shape: ModelShape;
  precision: Precision;
  gpu: GpuSpec;
  topology: Topology;
}

export type StageSearchResult =
  | { ok: true; stage: StagePlan; reasons: string[] }
  | { ok: false; code: PlanRefusalCode; reason: string };

interface ModelParallel {
  tp: number;
  cp: number;
  pp: number;
  recompute: Recompute;
}

interface Evaluated {
  layout: StageLayout;
  memory: MemoryEstimate;
  speed: StageSpeed;
}

const powersOfTwo = (max: number): number[] => {
  const out: number[] = [];
  for (let v = 1; v <= max; v *= 2) out.push(v);
  return out;
};
const divisors = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1).filter((d) => n % d === 0);
const gb = (v: number): string => `${v.toFixed(1)} GB`;

/**
 * Model-parallel layouts in order of preference: selective recompute before full (full costs a second
 * forward), then the fewest GPUs per model replica (everything else is data parallelism, the cheapest kind),
 * then PP last (it adds a bubble and is only useful across nodes), then CP before TP at equal size (for a long
 * sequence ring attention communicates less than TP's per-layer collectives).
 */
function modelParallelCandidates(r: StageRequest, maxTp: number, cpWithinNode: boolean): ModelParallel[] {
  const { gpusPerNode, nodes } = r.topology;
  const list: ModelParallel[] = [];
  for (const recompute of ['selective', 'full'] as const) {
    const sameRecompute: ModelParallel[] = [];
    for (const tp of powersOfTwo(maxTp)) {
      for (const cp of powersOfTwo(nodes * gpusPerNode)) {
        if (cp > 1 && r.sequenceLength / cp < A.cpMinTokensPerRank) continue;
        const inner = tp * cp;
        if (cpWithinNode ? gpusPerNode % inner !== 0 : (nodes * gpusPerNode) % inner !== 0) continue;
        for (const pp of divisors(nodes)) {
          if (pp > r.shape.layers) continue;
          if (!cpWithinNode && pp > 1) continue;
          sameRecompute.push({ tp, cp, pp, recompute });
        }
      }
    }
    sameRecompute.sort((a, b) => a.tp * a.cp * a.pp - b.tp * b.cp * b.pp || a.pp - b.pp || a.tp - b.tp);
    list.push(...sameRecompute);
  }
  return list;
}

function shardOptions(mp: ModelParallel, dp: number, r: StageRequest): Array<{ shard: FsdpShard; dpShard: number }> {
  if (dp * mp.cp === 1) return [{ shard: 'none', dpShard: 1 }];
  const nodesPerStage = r.topology.nodes / mp.pp;
  const dpPerNode = r.topology.gpusPerNode / (mp.tp * mp.cp);
  if (nodesPerStage <= 1 || dpPerNode >= dp) return [{ shard: 'full', dpShard: dp }];
  // Sharding inside a node keeps parameter gathers on NVLink; shard across nodes only when memory demands it.
  const node: FsdpShard = dpPerNode * mp.cp > 1 ? 'node' : 'none';
  return [
    { shard: node, dpShard: dpPerNode },
    { shard: 'full', dpShard: dp },
  ];
}

function evaluate(r: StageRequest, mp: ModelParallel, dp: number, shard: FsdpShard, dpShard: number, microBatch: number, gbsRef: number): Evaluated {
  const gradientAccumulation = Math.max(1, Math.floor(gbsRef / (dp * microBatch)));
  const layout: StageLayout = {
    ...mp,
    dp,
    dpShard,
    shard,
    microBatch,
    gradientAccumulation,
    sequenceLength: r.sequenceLength,
    precision: r.precision,
  };
  return { layout, memory: estimateMemory(r.shape, layout), speed: stageSpeed(r.shape, layout, r.topology) };
}

function microBatchOptions(r: StageRequest, dp: number, gbsRef: number): number[] {
  return powersOfTwo(64)
    .filter((b) => b === 1 || (b * r.sequenceLength <= A.maxMicroBatchTokens && dp * b <= gbsRef))
    .reverse();
}

/** Chooses the degrees for one sequence length, or says why none can work. */
export function planStage(r: StageRequest): StageSearchResult {
  const { nodes, gpusPerNode, fabric } = r.topology;
  const gpus = nodes * gpusPerNode;
  const usable = usableMemoryGb(r.gpu.memoryGb);
  const gbsRef = Math.max(1, Math.round(referenceBatchTokens(r.shape.parameters) / r.sequenceLength));
  const maxTp = Math.min(gpusPerNode, r.gpu.nvlinkDomain);
  const candidates = modelParallelCandidates(r, maxTp, true);
  const label = `${r.stages.join('+')} at ${r.sequenceLength} tokens`;

  const dpOf = (mp: ModelParallel): number => gpus / (mp.tp * mp.cp * mp.pp);
  const fitsAtAll = (mp: ModelParallel): boolean =>
    shardOptions(mp, dpOf(mp), r).some((s) => evaluate(r, mp, dpOf(mp), s.shard, s.dpShard, 1, gbsRef).memory.totalGb <= usable);

  const minimalIndex = candidates.findIndex(fitsAtAll);
  if (minimalIndex < 0) return refuseDoesNotFit(r, usable, gbsRef, label);
  const minimal = candidates[minimalIndex]!;
  const minimalDp = dpOf(minimal);
  if (minimalDp > gbsRef) {
    const replicaGpus = minimal.tp * minimal.cp * minimal.pp;
    const usableNodes = Math.max(1, Math.floor((gbsRef * replicaGpus) / gpusPerNode));
    return {
      ok: false,
      code: 'plan_refused',
      reason:
        `more nodes than data parallelism can use for the batch (${label}): the model fits on ${replicaGpus} GPU(s) per replica, ` +
        `so ${gpus} GPUs make ${minimalDp} data-parallel replicas, but a step of ~${referenceBatchTokens(r.shape.parameters)} tokens ` +
        `holds only ${gbsRef} sequence(s); ${minimalDp - gbsRef} replicas would idle. Use at most ${usableNodes} node(s).`,
    };
  }

  if (nodes > 1 && fabric.maxMultiNodeParameters !== null && r.shape.parameters > fabric.maxMultiNodeParameters) {
    return {
      ok: false,
      code: 'fabric_unsupported',
      reason:
        `${fabric.name} has no RDMA (${fabric.perGpuGbps} Gb/s per GPU over TCP); a ${nodes}-node plan is supported on it only ` +
        `for models up to ${fabric.maxMultiNodeParameters / 1e9}B parameters, and this model has ${(r.shape.parameters / 1e9).toFixed(1)}B. ` +
        `Use one node, or a booking on infiniband or roce.`,
    };
  }

  let bestFabricMiss: Evaluated | undefined;
  for (const mp of candidates.slice(minimalIndex)) {
    const dp = dpOf(mp);
    if (dp > gbsRef) continue;
    for (const s of shardOptions(mp, dp, r)) {
      const fitting = microBatchOptions(r, dp, gbsRef)
        .map((b) => evaluate(r, mp, dp, s.shard, s.dpShard, b, gbsRef))
        .find((e) => e.memory.totalGb <= usable);
      if (!fitting) continue;
      if (fitting.speed.fabricEfficiency >= A.minFabricEfficiency) {
        return { ok: true, stage: toStagePlan(r, fitting), reasons: explain(r, fitting, usable, gbsRef, minimal) };
      }
      if (!bestFabricMiss || fitting.speed.fabricEfficiency > bestFabricMiss.speed.fabricEfficiency) bestFabricMiss = fitting;
    }
  }
  const miss = bestFabricMiss!;
  return {
    ok: false,
    code: 'fabric_unsupported',
    reason:
      `a ${nodes}-node plan is too slow on ${fabric.name} (${fabric.perGpuGbps} Gb/s per GPU) for ${label}: the best layout ` +
      `(tp=${miss.layout.tp} pp=${miss.layout.pp} cp=${miss.layout.cp} dp=${miss.layout.dp}, FSDP ${miss.layout.shard}) moves ` +
      `${miss.speed.commSecondsPerStep.toFixed(1)} s of inter-node traffic per ${miss.speed.computeSecondsPerStep.toFixed(1)} s step, ` +
      `a fabric efficiency of ${(miss.speed.fabricEfficiency * 100).toFixed(0)}% (minimum ${A.minFabricEfficiency * 100}%).`,
  };
}

function refuseDoesNotFit(r: StageRequest, usable: number, gbsRef: number, label: string): StageSearchResult {
  const gpus = r.topology.nodes * r.topology.gpusPerNode;
  // Would it fit if tensor/context parallelism could leave the node? Then say so: TP across nodes is refused.
  const relaxed = modelParallelCandidates(r, gpus, false).find((mp) => {
    const dp = gpus / (mp.tp * mp.cp);
    return evaluate(r, mp, dp, 'full', dp, 1, gbsRef).memory.totalGb <= usable;
  });
  if (relaxed && relaxed.tp * relaxed.cp > r.topology.gpusPerNode) {
    return {
      ok: false,
      code: 'plan_refused',
      reason:
        `tensor parallelism across nodes: ${label} fits only with tp×cp = ${relaxed.tp * relaxed.cp} GPUs per layer, more than ` +
        `the ${r.topology.gpusPerNode} GPUs per node (NVLink domain ${r.gpu.nvlinkDomain}); book larger-memory GPUs or shorten the sequence.`,
    };
  }
  const best = evaluate(
    r,
    { tp: Math.min(r.topology.gpusPerNode, r.gpu.nvlinkDomain), cp: 1, pp: 1, recompute: 'full' },
    gpus / Math.min(r.topology.gpusPerNode, r.gpu.nvlinkDomain),
    'full',
    gpus / Math.min(r.topology.gpusPerNode, r.gpu.nvlinkDomain),
    1,
    gbsRef,
  ).memory;
  return {
    ok: false,
    code: 'plan_refused',
    reason:
      `the model does not fit (${label}): even fully sharded across all ${gpus} GPUs with maximum TP and full recompute it needs ` +
      `${gb(best.totalGb)} per GPU (model state ${gb(best.modelStatesGb)}) against ${gb(usable)} usable of ${r.gpu.memoryGb} GB; ` +
      `the model state alone is ${gb((best.modelStatesGb * gpus))} in total. Book more or larger GPUs.`,
  };
}

function toStagePlan(r: StageRequest, e: Evaluated): StagePlan {
  const l = e.layout;
  return {
    stages: r.stages,
    sequence_length: r.sequenceLength,
    tp: l.tp,
    pp: l.pp,
    dp: l.dp,
    cp: l.cp,
    fsdp: l.dpShard * l.cp > 1,
    fsdp_shard: l.shard,
    recompute: l.recompute,
    micro_batch: l.microBatch,
    global_batch_sequences: l.dp * l.microBatch * l.gradientAccumulation,
    gradient_accumulation: l.gradientAccumulation,
    memory_per_gpu_gb: Math.round(e.memory.totalGb * 10) / 10,
    fabric_efficiency: Math.round(e.speed.fabricEfficiency * 1000) / 1000,
    mfu_effective: Math.round(e.speed.mfuEffective * 1000) / 1000,
    tokens_per_s: Math.round(e.speed.tokensPerS),
  };
}

function explain(r: StageRequest, e: Evaluated, usable: number, gbsRef: number, minimal: ModelParallel): string[] {
  const l = e.layout;
  const m = e.memory;
  const label = `${r.stages.join('+')} (${r.sequenceLength} tokens)`;
  const reasons = [
    `${label}: tp=${l.tp} is the smallest tensor parallelism that fits, kept inside one node's NVLink domain (${r.gpu.nvlinkDomain}).`,
    l.cp > 1
      ? `${label}: cp=${l.cp} splits each ${r.sequenceLength}-token sequence into ${r.sequenceLength / l.cp}-token chunks so activations fit.`
      : `${label}: cp=1, the sequence fits without context parallelism.`,
    l.pp > 1
      ? `${label}: pp=${l.pp}, one pipeline stage per ${r.topology.nodes / l.pp} node(s), keeps parameter traffic off the ${r.topology.fabric.name} fabric (bubble ${(((l.pp - 1) / (l.gradientAccumulation + l.pp - 1)) * 100).toFixed(0)}%).`
      : `${label}: pp=1, no pipeline parallelism needed.`,
    `${label}: dp=${l.dp} data-parallel replicas; FSDP ${l.shard === 'node' ? 'shards inside each node and replicates across nodes' : l.shard === 'full' ? 'shards across every data-parallel rank' : 'is off'}.`,
    `${label}: micro-batch ${l.microBatch} × ${l.gradientAccumulation} accumulation steps × dp ${l.dp} = ${l.dp * l.microBatch * l.gradientAccumulation} sequences per step (reference ${gbsRef}, ~${referenceBatchTokens(r.shape.parameters)} tokens).`,
    `${label}: ${l.recompute} activation recompute; ${gb(m.totalGb)} per GPU (state ${gb(m.modelStatesGb)}, activations ${gb(m.activationsGb)}, logits ${gb(m.logitsGb)}) of ${gb(usable)} usable.`,
    `${label}: fabric efficiency ${(e.speed.fabricEfficiency * 100).toFixed(0)}%, effective MFU ${(e.speed.mfuEffective * 100).toFixed(1)}% → ${Math.round(e.speed.tokensPerS)} tokens/s.`,
  ];
  if (l.tp * l.cp * l.pp > minimal.tp * minimal.cp * minimal.pp) {
    reasons.push(`${label}: more model parallelism than memory needs (${minimal.tp * minimal.cp * minimal.pp} GPUs per replica) because the smaller layouts stall on the fabric.`);
  }
  return reasons;
}
