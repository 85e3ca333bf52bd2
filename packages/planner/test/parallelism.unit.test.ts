import { describe, expect, it } from 'vitest';
import { GPU_CATALOG, PLAN_ASSUMPTIONS, estimateShape, type FabricSpec } from '@ito/planner';
import { planStage } from '../src/parallelism.js';

/** A fabric slower than any in the catalog, with RDMA so no size limit applies: only its speed can refuse a plan. */
const slow: FabricSpec = { name: 'slow', perGpuGbps: 0.5, rdma: true, maxMultiNodeParameters: null };

const stage8B = (nodes: number, fabric: FabricSpec = slow) =>
  planStage({
    stages: ['pretrain'],
    sequenceLength: 8192,
    shape: estimateShape(8e9, 128256),
    precision: 'bf16',
    gpu: GPU_CATALOG.h200!,
    topology: { nodes, gpusPerNode: 8, peakTflops: 989, mfuBase: PLAN_ASSUMPTIONS.mfuBf16, fabric },
  });

describe('planStage on a slow fabric', () => {
  it('plans plain data parallelism on 2 nodes, where the gradients still hide behind compute', () => {
    const r = stage8B(2);
    if (!r.ok) throw new Error(r.reason);
    expect([r.stage.tp, r.stage.pp, r.stage.dp, r.stage.fabric_efficiency]).toEqual([1, 1, 16, 0.931]);
  });

  it('refuses 4 nodes as fabric_unsupported, naming the best layout it found and how far it misses', () => {
    const r = stage8B(4);
    if (r.ok) throw new Error('expected a refusal');
    expect(r.code).toBe('fabric_unsupported');
    expect(r.reason).toBe(
      'a 4-node plan is too slow on slow (0.5 Gb/s per GPU) for pretrain at 8192 tokens: the best layout (tp=8 pp=1 cp=1 dp=4, FSDP none) moves ' +
        '48.0 s of inter-node traffic per 27.7 s step, a fabric efficiency of 52% (minimum 80%).',
    );
  });
});
