import { describe, expect, it } from 'vitest';
import { estimateCost, estimateMemory, estimateShape, GPU_CATALOG, FABRIC_CATALOG } from '@ito/planner';

describe('estimateCost', () => {
  it('given 16 GPUs for 100 hours at $2.5, then compute is 1600 GPU-hours and $4000', () => {
    const c = estimateCost({ gpus: 16, estimatedHours: 100, rateUsdPerGpuHour: 2.5, parameters: 8e9, keepLast: 3 });
    expect(c.cost_breakdown.gpu_hours).toBe(1600);
    expect(c.estimated_cost_usd).toBe(4000);
  });

  it('given an 8B model keeping 3 checkpoints for one 730-hour month, then storage and egress match the hand computation', () => {
    // checkpoint = 8e9 × 14 bytes = 112 GB; 3 kept = 336 GB × $0.023 × 1 month = $7.728 → $7.73
    // egress of the final checkpoint = 112 GB × $0.09 = $10.08; incremental = $17.81
    const c = estimateCost({ gpus: 8, estimatedHours: 730, rateUsdPerGpuHour: 1, parameters: 8e9, keepLast: 3 });
    expect(c.cost_breakdown.checkpoint_size_gb).toBe(112);
    expect(c.cost_breakdown.run_months).toBe(1);
    expect(c.cost_breakdown.checkpoint_storage_usd).toBe(7.73);
    expect(c.cost_breakdown.egress_usd).toBe(10.08);
    expect(c.incremental_cost_usd).toBe(17.81);
    expect(c.estimated_cost_usd).toBe(5840);
  });

  it('given fractional hours, then amounts are rounded to cents', () => {
    const c = estimateCost({ gpus: 3, estimatedHours: 1.111, rateUsdPerGpuHour: 2.345, parameters: 1e9, keepLast: 1 });
    expect(c.cost_breakdown.gpu_hours).toBe(3.33);
    expect(c.estimated_cost_usd).toBe(7.81);
    expect(Number.isInteger(Math.round(c.incremental_cost_usd * 100))).toBe(true);
  });
});

describe('estimateMemory', () => {
  it('given 8B in bf16 sharded over 8 GPUs, then the model state is 16 bytes per parameter divided by 8', () => {
    const shape = estimateShape(8e9, 128_256);
    const m = estimateMemory(shape, { tp: 1, pp: 1, cp: 1, dpShard: 8, shard: 'full', microBatch: 1, gradientAccumulation: 1, sequenceLength: 8192, recompute: 'selective', precision: 'bf16' });
    expect(m.modelStatesGb).toBeCloseTo(16, 6);
    // 34 bytes × 8192 tokens × 4352 hidden × 34 layers
    expect(m.activationsGb).toBeCloseTo((34 * 8192 * 4352 * 34) / 1e9, 6);
  });

  it('given full recompute, then activations shrink', () => {
    const shape = estimateShape(8e9, 128_256);
    const base = { tp: 1, pp: 1, cp: 1, dpShard: 8, shard: 'full' as const, microBatch: 1, gradientAccumulation: 1, sequenceLength: 8192, precision: 'bf16' as const };
    expect(estimateMemory(shape, { ...base, recompute: 'full' }).activationsGb).toBeLessThan(estimateMemory(shape, { ...base, recompute: 'selective' }).activationsGb / 5);
  });
});

describe('catalogs', () => {
  it('list the required GPUs and fabrics with FP8 only from Hopper on', () => {
    for (const g of ['h100', 'h200', 'b200', 'a100', 'l40s']) expect(GPU_CATALOG[g]).toBeDefined();
    for (const f of ['infiniband', 'roce', 'ethernet']) expect(FABRIC_CATALOG[f]).toBeDefined();
    expect(GPU_CATALOG.a100!.denseFp8Tflops).toBeNull();
    expect(GPU_CATALOG.h200!.denseFp8Tflops).not.toBeNull();
  });

  it('gives an 8B model a Llama-like shape', () => {
    const s = estimateShape(8e9, 128_256);
    expect(s.hidden).toBe(4352);
    expect(s.layers).toBe(34);
  });
});
