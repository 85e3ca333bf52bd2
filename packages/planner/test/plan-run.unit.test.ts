import { describe, expect, it } from 'vitest';
import { planRun, PLAN_ASSUMPTIONS } from '@ito/planner';
import { booking, exampleManifest, manifestWith, NOW } from './fixtures.js';

function planned(result: ReturnType<typeof planRun>) {
  if (!result.ok) throw new Error(`expected a plan, got ${result.code}: ${result.reason}`);
  return result;
}

describe('planRun on the example manifest', () => {
  it('given 2 × 8 H200 on infiniband, when planned, then the degrees use all 16 GPUs with TP inside a node and fp8', () => {
    const { plan } = planned(planRun({ manifest: exampleManifest(), booking: booking(), now: NOW }));
    expect(plan.tp).toBeLessThanOrEqual(8);
    expect(plan.tp * plan.pp * plan.dp * plan.cp).toBe(16);
    expect(plan.precision).toBe('fp8');
    expect(plan.gpu_memory_gb).toBe(141);
    expect(plan.memory_per_gpu_gb).toBeLessThanOrEqual(141 * PLAN_ASSUMPTIONS.usableMemoryFraction);
    expect(plan.mfu_assumption).toBe(PLAN_ASSUMPTIONS.mfuFp8);
    expect(plan.global_batch_sequences).toBe(plan.dp * plan.micro_batch * plan.gradient_accumulation);
    expect(plan.reasons.length).toBeGreaterThan(5);
  });

  it('given the long_context curriculum, when planned, then the long-context stage uses context parallelism on 16 GPUs', () => {
    const { plan } = planned(planRun({ manifest: exampleManifest(), booking: booking(), now: NOW }));
    const long = plan.stage_plans.find((s) => s.sequence_length === 65536);
    expect(long).toBeDefined();
    expect(long!.cp).toBeGreaterThan(1);
    expect(long!.tp * long!.pp * long!.dp * long!.cp).toBe(16);
    expect(long!.memory_per_gpu_gb).toBeLessThanOrEqual(141 * PLAN_ASSUMPTIONS.usableMemoryFraction);
    // Attention at 64k tokens costs more per token than at 8k.
    expect(long!.tokens_per_s).toBeLessThan(plan.tokens_per_s);
  });

  it('given the example budget, when planned, then cost and incremental cost stay under the ceilings', () => {
    const m = exampleManifest();
    const r = planned(planRun({ manifest: m, booking: booking(), now: NOW }));
    expect(r.estimated_cost_usd).toBeGreaterThan(0);
    expect(r.estimated_cost_usd).toBeLessThan(m.budget.ceiling_usd);
    expect(r.incremental_cost_usd).toBeGreaterThan(0);
    expect(r.incremental_cost_usd).toBeLessThan(m.budget.max_incremental_cost_usd);
  });

  it('given the plan, then hours, GPU-hours and cost agree with each other and with the phases', () => {
    const r = planned(planRun({ manifest: exampleManifest(), booking: booking(), now: NOW }));
    expect(r.estimated_hours).toBe(r.plan.estimated_hours);
    expect(r.plan.gpu_hours).toBeCloseTo(r.estimated_hours * 16, 2);
    expect(r.estimated_cost_usd).toBeCloseTo(r.plan.gpu_hours * 2.5, 2);
    const phaseHours = r.plan.phases.reduce((h, p) => h + p.hours, 0);
    // Phase hours are rounded each; checkpoint stalls add a little on top.
    expect(r.estimated_hours).toBeGreaterThanOrEqual(phaseHours - 0.05);
    expect(r.estimated_hours).toBeLessThan(phaseHours * 1.02);
    const trained = r.plan.phases.filter((p) => ['pretrain+mid_train', 'long_context'].includes(p.phase)).reduce((t, p) => t + p.tokens, 0);
    expect(trained).toBe(42_000_000_000);
  });

  it('given tokens/s and the flop model, then tokens/s is what 16 GPUs at the effective MFU deliver', () => {
    const { plan } = planned(planRun({ manifest: exampleManifest(), booking: booking(), now: NOW }));
    const main = plan.stage_plans[0]!;
    // 8B with Llama-3-8B's published shape (32 layers × 4096 hidden): 6N + 6·L·h·s FLOPs per token at s = 8192.
    // The planner estimates the shape from N, so it may differ by the estimate's error on the attention term
    // (a few percent of the total); dropping that term would be 12 % off.
    const flopsPerToken = 6 * 8e9 + 6 * 32 * 4096 * 8192;
    const expected = (16 * 1979e12 * main.mfu_effective) / flopsPerToken;
    expect(main.tokens_per_s / expected).toBeGreaterThan(0.97);
    expect(main.tokens_per_s / expected).toBeLessThan(1.03);
  });

  it('given 2 × 8 A100, when planned, then precision is bf16 because FP8 needs Hopper or newer', () => {
    const r = planned(planRun({ manifest: exampleManifest(), booking: booking({ gpu: 'a100' }), now: NOW }));
    expect(r.plan.precision).toBe('bf16');
    expect(r.plan.mfu_assumption).toBe(PLAN_ASSUMPTIONS.mfuBf16);
    expect(r.plan.tp * r.plan.pp * r.plan.dp * r.plan.cp).toBe(16);
    expect(r.plan.memory_per_gpu_gb).toBeLessThanOrEqual(80 * PLAN_ASSUMPTIONS.usableMemoryFraction);
    expect(r.plan.reasons.some((s) => s.startsWith('bf16'))).toBe(true);
  });

  it('given a small model on Hopper, when planned, then it stays in bf16', () => {
    const m = manifestWith((x) => (x.model.parameters = '400M'));
    const r = planned(planRun({ manifest: m, booking: booking({ nodes: 1 }), now: NOW }));
    expect(r.plan.precision).toBe('bf16');
  });

  it('given a 70B model on 4 × 8 H100 on infiniband, when planned, then TP grows within the node to fit', () => {
    const m = manifestWith((x) => (x.model.parameters = '70B'));
    const r = planned(planRun({ manifest: m, booking: booking({ gpu: 'h100', nodes: 4 }), now: NOW }));
    expect(r.plan.tp).toBeGreaterThan(1);
    expect(r.plan.tp).toBeLessThanOrEqual(8);
    expect(r.plan.tp * r.plan.pp * r.plan.dp * r.plan.cp).toBe(32);
    expect(r.plan.memory_per_gpu_gb).toBeLessThanOrEqual(80 * PLAN_ASSUMPTIONS.usableMemoryFraction);
  });

  it('given the GPU name in upper case, when planned, then the catalog still finds it', () => {
    expect(planRun({ manifest: exampleManifest(), booking: booking({ gpu: 'H200', fabric: 'InfiniBand' }), now: NOW }).ok).toBe(true);
  });

  it('given the same input twice, when planned, then the results are identical', () => {
    const a = planRun({ manifest: exampleManifest(), booking: booking(), now: NOW });
    const b = planRun({ manifest: exampleManifest(), booking: booking(), now: NOW });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
  });
});

function refused(result: ReturnType<typeof planRun>) {
  if (result.ok) throw new Error(`expected a refusal, got a plan: tp=${result.plan.tp} dp=${result.plan.dp}`);
  return result;
}

describe('planRun refusals', () => {
  it('given a 405B model on 1 × 8 A100, when planned, then plan_refused: the model does not fit', () => {
    const m = manifestWith((x) => (x.model.parameters = '405B'));
    const r = refused(planRun({ manifest: m, booking: booking({ gpu: 'a100', nodes: 1 }), now: NOW }));
    expect(r.code).toBe('plan_refused');
    expect(r.reason).toMatch(/does not fit/);
    expect(r.reason).toMatch(/80 GB/);
  });

  it('given a tiny model on 64 nodes, when planned, then plan_refused: more nodes than data parallelism can use', () => {
    const m = manifestWith((x) => (x.model.parameters = '150M'));
    const r = refused(planRun({ manifest: m, booking: booking({ gpu: 'h100', nodes: 64 }), now: NOW }));
    expect(r.code).toBe('plan_refused');
    expect(r.reason).toMatch(/more nodes than data parallelism can use/);
    expect(r.reason).toMatch(/512 data-parallel replicas/);
  });

  it('given the same tiny model on 1 node, when planned, then it plans fine (the refusal is about the node count)', () => {
    const m = manifestWith((x) => (x.model.parameters = '150M'));
    expect(planRun({ manifest: m, booking: booking({ gpu: 'h100', nodes: 1 }), now: NOW }).ok).toBe(true);
  });

  it('given a 70B model on 4 nodes over ethernet, when planned, then fabric_unsupported', () => {
    const m = manifestWith((x) => (x.model.parameters = '70B'));
    const r = refused(planRun({ manifest: m, booking: booking({ nodes: 4, fabric: 'ethernet' }), now: NOW }));
    expect(r.code).toBe('fabric_unsupported');
    expect(r.reason).toMatch(/ethernet/);
  });

  it('given the 70B model on the same 4 nodes over infiniband, when planned, then it plans', () => {
    const m = manifestWith((x) => (x.model.parameters = '70B'));
    expect(planRun({ manifest: m, booking: booking({ nodes: 4, fabric: 'infiniband' }), now: NOW }).ok).toBe(true);
  });

  it('given a 405B model whose long context needs TP beyond a node, when planned, then plan_refused: tensor parallelism across nodes', () => {
    const m = manifestWith((x) => (x.model.parameters = '405B'));
    const r = refused(planRun({ manifest: m, booking: booking({ gpu: 'h100', nodes: 16, fabric: 'roce' }), now: NOW }));
    expect(r.code).toBe('plan_refused');
    expect(r.reason).toMatch(/tensor parallelism across nodes/);
  });

  it('given a term ending tomorrow, when planned, then capacity_insufficient with hours needed and hours left', () => {
    const r = refused(planRun({ manifest: exampleManifest(), booking: booking({ termEnd: new Date(NOW.getTime() + 86_400_000) }), now: NOW }));
    expect(r.code).toBe('capacity_insufficient');
    expect(r.reason).toMatch(/needs \d+\.\d+ hours/);
    expect(r.reason).toMatch(/24\.00 hours left/);
  });

  it('given a term that has not started, when planned, then hours left count from the term start', () => {
    const start = new Date(NOW.getTime() + 10 * 86_400_000);
    const end = new Date(start.getTime() + 2 * 86_400_000);
    const r = refused(planRun({ manifest: exampleManifest(), booking: booking({ termStart: start, termEnd: end }), now: NOW }));
    expect(r.code).toBe('capacity_insufficient');
    expect(r.reason).toMatch(/48\.00 hours left/);
  });

  it('given an unknown GPU or fabric, when planned, then plan_refused naming it', () => {
    const gpu = refused(planRun({ manifest: exampleManifest(), booking: booking({ gpu: 'tpu-v5' }), now: NOW }));
    expect(gpu.code).toBe('plan_refused');
    expect(gpu.reason).toMatch(/unknown GPU "tpu-v5"/);
    const fabric = refused(planRun({ manifest: exampleManifest(), booking: booking({ fabric: 'carrier-pigeon' }), now: NOW }));
    expect(fabric.code).toBe('plan_refused');
    expect(fabric.reason).toMatch(/unknown fabric "carrier-pigeon"/);
  });

  it('given a malformed booking, when planned, then plan_refused listing each problem', () => {
    const r = refused(planRun({ manifest: exampleManifest(), booking: booking({ nodes: 0, rateUsdPerGpuHour: Number.NaN }), now: NOW }));
    expect(r.code).toBe('plan_refused');
    expect(r.reason).toMatch(/booking\.nodes/);
    expect(r.reason).toMatch(/rateUsdPerGpuHour/);
  });

  it('given the catalog key "constructor", when planned, then it is an unknown GPU, not a prototype property', () => {
    const r = refused(planRun({ manifest: exampleManifest(), booking: booking({ gpu: 'constructor' }), now: NOW }));
    expect(r.reason).toMatch(/unknown GPU/);
  });
});

describe('planRun refusals: what each says', () => {
  it('the model that does not fit: its need per GPU, the usable memory and the whole model state', () => {
    const r = refused(planRun({ manifest: manifestWith((x) => (x.model.parameters = '405B')), booking: booking({ gpu: 'a100', nodes: 1 }), now: NOW }));
    expect(r.reason).toBe(
      'the model does not fit (pretrain+mid_train+sft+dpo+rlvr at 8192 tokens): even fully sharded across all 8 GPUs with maximum TP and full recompute it needs ' +
        '815.6 GB per GPU (model state 810.0 GB) against 70.0 GB usable of 80 GB; the model state alone is 6480.0 GB in total. Book more or larger GPUs.',
    );
  });

  it('more nodes than the batch can use: the replicas, the idle ones and the nodes that would do', () => {
    const r = refused(planRun({ manifest: manifestWith((x) => (x.model.parameters = '150M')), booking: booking({ gpu: 'h100', nodes: 64 }), now: NOW }));
    expect(r.reason).toBe(
      'more nodes than data parallelism can use for the batch (pretrain+mid_train+sft+dpo+rlvr at 8192 tokens): the model fits on 1 GPU(s) per replica, ' +
        'so 512 GPUs make 512 data-parallel replicas, but a step of ~524288 tokens holds only 64 sequence(s); 448 replicas would idle. Use at most 8 node(s).',
    );
    // A replica of 2 GPUs (context parallelism at 64k tokens): the nodes that would do count its GPUs.
    const long = refused(planRun({ manifest: manifestWith((x) => (x.model.parameters = '1B')), booking: booking({ nodes: 16, fabric: 'ethernet' }), now: NOW }));
    expect(long.reason).toMatch(/fits on 2 GPU\(s\) per replica, so 128 GPUs make 64 data-parallel replicas, but a step of ~2097152 tokens holds only 32 sequence\(s\); 32 replicas would idle\. Use at most 8 node\(s\)\.$/);
  });

  it('a model over the size TCP supports across nodes, and the size it does; one node over ethernet is not refused for it', () => {
    const r = refused(planRun({ manifest: manifestWith((x) => (x.model.parameters = '14B')), booking: booking({ nodes: 2, fabric: 'ethernet' }), now: NOW }));
    expect(r.code).toBe('fabric_unsupported');
    expect(r.reason).toBe(
      'ethernet has no RDMA (12.5 Gb/s per GPU over TCP); a 2-node plan is supported on it only for models up to 13B parameters, and this model has 14.0B. Use one node, or a booking on infiniband or roce.',
    );
    expect(planRun({ manifest: manifestWith((x) => (x.model.parameters = '13B')), booking: booking({ nodes: 2, fabric: 'ethernet' }), now: NOW }).ok).toBe(true);
    expect(planRun({ manifest: manifestWith((x) => (x.model.parameters = '14B')), booking: booking({ nodes: 1, fabric: 'ethernet' }), now: NOW }).ok).toBe(true);
  });

  it('tensor parallelism across nodes: the GPUs a layer needs against those of a node', () => {
    const r = refused(planRun({ manifest: manifestWith((x) => (x.model.parameters = '405B')), booking: booking({ gpu: 'h100', nodes: 16, fabric: 'roce' }), now: NOW }));
    expect(r.reason).toBe(
      'tensor parallelism across nodes: long_context at 65536 tokens fits only with tp×cp = 32 GPUs per layer, more than the 8 GPUs per node (NVLink domain 8); book larger-memory GPUs or shorten the sequence.',
    );
  });

  it('a curriculum that trains no tokens is refused before anything is planned', () => {
    const r = refused(planRun({ manifest: manifestWith((x) => (x.target.curriculum = [])), booking: booking(), now: NOW }));
    expect(r).toEqual({ ok: false, code: 'plan_refused', reason: 'the curriculum trains no tokens' });
  });

  it('a malformed booking is refused with every problem, before its GPU or fabric is looked up', () => {
    const r = refused(planRun({ manifest: exampleManifest(), booking: booking({ gpu: '', nodes: 0 }), now: NOW }));
    expect(r.reason).toBe('invalid plan request: booking.gpu must name a GPU model; booking.nodes must be an integer from 1 to 4096');
  });

  it('an unknown GPU or fabric lists the ones the planner knows', () => {
    expect(refused(planRun({ manifest: exampleManifest(), booking: booking({ gpu: 'tpu-v5' }), now: NOW })).reason).toBe('unknown GPU "tpu-v5"; the planner knows a100, l40s, h100, h200, b200');
    expect(refused(planRun({ manifest: exampleManifest(), booking: booking({ fabric: 'pigeon' }), now: NOW })).reason).toBe('unknown fabric "pigeon"; the planner knows infiniband, roce, ethernet');
  });

  it('a term under way counts its hours from now; an ended one has none left', () => {
    const day = 86_400_000;
    const underWay = refused(planRun({ manifest: exampleManifest(), booking: booking({ termStart: new Date(NOW.getTime() - 10 * day), termEnd: new Date(NOW.getTime() + day) }), now: NOW }));
    expect(underWay.reason).toMatch(/^the plan needs \d+\.\d\d hours on 16 GPUs but the booking term has 24\.00 hours left \(ends 2026-12-02T00:00:00\.000Z\)\.$/);
    const ended = refused(planRun({ manifest: exampleManifest(), booking: booking({ termStart: new Date(NOW.getTime() - 10 * day), termEnd: new Date(NOW.getTime() - day) }), now: NOW }));
    expect(ended.reason).toMatch(/but the booking term has 0\.00 hours left/);
  });

  it('a term exactly as long as the plan needs is enough; one hundredth of an hour less is not', () => {
    const { estimated_hours } = planned(planRun({ manifest: exampleManifest(), booking: booking(), now: NOW }));
    const termOf = (hours: number) => booking({ termEnd: new Date(NOW.getTime() + Math.round(hours * 3_600_000)) });
    expect(planRun({ manifest: exampleManifest(), booking: termOf(estimated_hours), now: NOW }).ok).toBe(true);
    expect(refused(planRun({ manifest: exampleManifest(), booking: termOf(estimated_hours - 0.01), now: NOW })).code).toBe('capacity_insufficient');
  });
});

describe('planRun at the edges of its refusals', () => {
  it('as many data-parallel replicas as the batch has sequences is not too many', () => {
    // 150M at 8192 tokens: a step of ~524288 tokens holds 64 sequences, and 8 × 8 GPUs make 64 replicas.
    const m = manifestWith((x) => {
      x.model.parameters = '150M';
      x.target.curriculum = ['pretrain'];
    });
    const { plan } = planned(planRun({ manifest: m, booking: booking({ gpu: 'h100', nodes: 8 }), now: NOW }));
    expect([plan.tp, plan.pp, plan.cp, plan.dp]).toEqual([1, 1, 1, 64]);
  });

  it('a replica pipelined across nodes counts all its GPUs in the nodes the refusal says would do', () => {
    // 405B on A100: a replica is tp=8 × pp=2, 16 GPUs; 512 sequences per step keep 512 × 16 GPUs = 1024 nodes busy.
    const m = manifestWith((x) => {
      x.model.parameters = '405B';
      x.target.curriculum = ['pretrain'];
    });
    const r = refused(planRun({ manifest: m, booking: booking({ gpu: 'a100', nodes: 4096, termEnd: new Date(NOW.getTime() + 1e12) }), now: NOW }));
    expect(r.reason).toMatch(/the model fits on 16 GPU\(s\) per replica, so 32768 GPUs make 2048 data-parallel replicas, .* holds only 512 sequence\(s\); 1536 replicas would idle\. Use at most 1024 node\(s\)\.$/);
  });

  it('on GPUs with no NVLink (one GPU per domain), the model that does not fit is measured at tp=1, fully sharded over every GPU', () => {
    const r = refused(planRun({ manifest: manifestWith((x) => (x.model.parameters = '30B')), booking: booking({ gpu: 'l40s', nodes: 1 }), now: NOW }));
    expect(r.reason).toBe(
      'the model does not fit (pretrain+mid_train+sft+dpo+rlvr at 8192 tokens): even fully sharded across all 8 GPUs with maximum TP and full recompute it needs ' +
        '78.6 GB per GPU (model state 60.0 GB) against 41.2 GB usable of 48 GB; the model state alone is 480.0 GB in total. Book more or larger GPUs.',
    );
  });

  it('blocking checkpoint saves add their stall to the estimate', () => {
    const hoursWith = (async: boolean) => {
      const r = planned(planRun({ manifest: manifestWith((x) => (x.checkpoint.async = async)), booking: booking(), now: NOW }));
      const [, saves, stall] = /^checkpoints: (\d+) .* stall ([\d.]+) s each\.$/.exec(r.plan.reasons.find((x) => x.startsWith('checkpoints:'))!)!;
      return { hours: r.estimated_hours, stallHours: (Number(saves) * Number(stall)) / 3600 };
    };
    const [async, blocking] = [hoursWith(true), hoursWith(false)];
    expect(blocking.stallHours).toBeGreaterThan(1);
    expect(blocking.hours - async.hours).toBeCloseTo(blocking.stallHours - async.stallHours, 1);
  });
});
