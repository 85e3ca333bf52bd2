import { parseParameterCount } from '@ito/contracts';
import { PLAN_ASSUMPTIONS as A, vocabularyFor } from './assumptions.js';
import { findFabric, findGpu, supportsFp8, FABRIC_CATALOG, GPU_CATALOG, type GpuSpec } from './catalog.js';
import { estimateCost } from './cost.js';
import { estimateShape } from './model-shape.js';
import { planStage } from './parallelism.js';
import { planPostTraining } from './post-training.js';
import { tokenPhases, type TokenPhase } from './phases.js';
import type { Topology } from './throughput.js';
import type { Plan, PlanInput, PlanPhase, PlanResult, Precision, StagePlan } from './types.js';
import { validatePlanRequest } from './validate.js';

const MS_PER_HOUR = 3_600_000;
const round2 = (v: number): number => Math.round(v * 100) / 100;

function choosePrecision(gpu: GpuSpec, parameters: number): { precision: Precision; reason: string } {
  if (!supportsFp8(gpu)) return { precision: 'bf16', reason: `bf16: ${gpu.name} (${gpu.architecture}) predates Hopper, and FP8 is planned only on Hopper or newer.` };
  if (parameters < A.fp8MinParameters) return { precision: 'bf16', reason: `bf16: below ${A.fp8MinParameters / 1e9}B parameters FP8 scaling overhead outweighs its speed-up.` };
  return { precision: 'fp8', reason: `fp8: ${gpu.name} is ${gpu.architecture}, FP8 doubles peak tensor throughput (${gpu.denseFp8Tflops} vs ${gpu.denseBf16Tflops} TFLOPs dense).` };
}

/**
 * Plans a manifest on a booking: degrees for each sequence length the curriculum trains at, hours from the
 * phases' tokens, and cost. Pure: the same input always gives the same answer.
 */
export function planRun(input: PlanInput): PlanResult {
  const { manifest, booking, now } = input;
  const problems = validatePlanRequest(booking, now);
  if (problems.length > 0) return { ok: false, code: 'plan_refused', reason: `invalid plan request: ${problems.join('; ')}` };
  const gpu = findGpu(booking.gpu);
  if (!gpu) return { ok: false, code: 'plan_refused', reason: `unknown GPU "${booking.gpu}"; the planner knows ${Object.keys(GPU_CATALOG).join(', ')}` };
  const fabric = findFabric(booking.fabric);
  if (!fabric) return { ok: false, code: 'plan_refused', reason: `unknown fabric "${booking.fabric}"; the planner knows ${Object.keys(FABRIC_CATALOG).join(', ')}` };

  const parameters = parseParameterCount(manifest.model.parameters);
  const shape = estimateShape(parameters, vocabularyFor(manifest.model.family));
  const { precision, reason: precisionReason } = choosePrecision(gpu, parameters);
  const mfuBase = precision === 'fp8' ? A.mfuFp8 : A.mfuBf16;
  const topology: Topology = {
    nodes: booking.nodes,
    gpusPerNode: booking.gpusPerNode,
    peakTflops: precision === 'fp8' ? gpu.denseFp8Tflops! : gpu.denseBf16Tflops,
    mfuBase,
    fabric,
  };
  const gpus = booking.nodes * booking.gpusPerNode;

  const placement = planPostTraining(manifest, booking);
  if (!placement.ok) return placement;

  const phases = tokenPhases(manifest);
  if (phases.length === 0) return { ok: false, code: 'plan_refused', reason: 'the curriculum trains no tokens' };
  const reasons: string[] = [
    `model: ${parameters / 1e9}B parameters, estimated ${shape.layers} layers × hidden ${shape.hidden} (h/L ≈ 128), vocabulary ${shape.vocabulary}.`,
    precisionReason,
    `MFU assumption: ${mfuBase} of the ${precision} dense peak (${topology.peakTflops} TFLOPs), lowered for TP/CP, recompute, pipeline bubble and exposed fabric time.`,
  ];

  const stagePlans = new Map<'main' | 'long', StagePlan>();
  for (const stage of ['main', 'long'] as const) {
    const inStage = phases.filter((p) => p.stage === stage);
    if (inStage.length === 0) continue;
    const sequenceLength = stage === 'main' ? manifest.target.sequence_length : manifest.target.long_context_length!;
    const result = planStage({ stages: inStage.map((p) => p.phase), sequenceLength, shape, precision, gpu, topology });
    if (!result.ok) return result;
    stagePlans.set(stage, result.stage);
    reasons.push(...result.reasons);
  }

  const planPhases: PlanPhase[] = phases.map((p: TokenPhase) => {
    const sp = stagePlans.get(p.stage)!;
    reasons.push(`phase ${p.phase}: ${p.tokens} tokens (${p.basis}).`);
    return { phase: p.phase, sequence_length: sp.sequence_length, tokens: p.tokens, tokens_per_s: sp.tokens_per_s, hours: round2(p.tokens / sp.tokens_per_s / 3600) };
  });
  const trainingHours = phases.reduce((h, p) => h + p.tokens / stagePlans.get(p.stage)!.tokens_per_s / 3600, 0);

  // Each checkpoint stalls training: async saves only for the copy to host memory, blocking ones for the write.
  const checkpointBytes = parameters * A.checkpointBytesPerParam;
  const stallSeconds = manifest.checkpoint.async
    ? checkpointBytes / gpus / (A.hostCopyGbPerS * 1e9)
    : checkpointBytes / (booking.nodes * A.storageWriteGbPerSPerNode * 1e9);
  const checkpoints = Math.floor((trainingHours * 60) / manifest.checkpoint.interval_minutes);
  const stallHours = (checkpoints * stallSeconds) / 3600;
  reasons.push(`checkpoints: ${checkpoints} ${manifest.checkpoint.async ? 'async' : 'blocking'} saves of ${(checkpointBytes / 1e9).toFixed(0)} GB every ${manifest.checkpoint.interval_minutes} min stall ${stallSeconds.toFixed(1)} s each.`);

  reasons.push(...placement.reasons);

  const estimatedHours = round2(trainingHours + stallHours);
  const termOpens = Math.max(now.getTime(), booking.termStart.getTime());
  const hoursLeft = Math.max(0, (booking.termEnd.getTime() - termOpens) / MS_PER_HOUR);
  if (estimatedHours > hoursLeft) {
    return {
      ok: false,
      code: 'capacity_insufficient',
      reason: `the plan needs ${estimatedHours.toFixed(2)} hours on ${gpus} GPUs but the booking term has ${hoursLeft.toFixed(2)} hours left (ends ${booking.termEnd.toISOString()}).`,
    };
  }

  const cost = estimateCost({ gpus, estimatedHours, rateUsdPerGpuHour: booking.rateUsdPerGpuHour, parameters, keepLast: manifest.checkpoint.keep_last });
  const primary = stagePlans.get('main') ?? stagePlans.get('long')!;
  const plan: Plan = {
    tp: primary.tp,
    pp: primary.pp,
    dp: primary.dp,
    cp: primary.cp,
    fsdp: primary.fsdp,
    fsdp_shard: primary.fsdp_shard,
    recompute: primary.recompute,
    precision,
    micro_batch: primary.micro_batch,
    global_batch_sequences: primary.global_batch_sequences,
    gradient_accumulation: primary.gradient_accumulation,
    memory_per_gpu_gb: primary.memory_per_gpu_gb,
    gpu_memory_gb: gpu.memoryGb,
    mfu_assumption: mfuBase,
    tokens_per_s: primary.tokens_per_s,
    estimated_hours: estimatedHours,
    gpu_hours: cost.cost_breakdown.gpu_hours,
    gpus,
    parameters,
    stage_plans: [...stagePlans.values()],
    phases: planPhases,
    post_training: placement.placements,
    reasons,
  };
  return { ok: true, plan, estimated_cost_usd: cost.estimated_cost_usd, incremental_cost_usd: cost.incremental_cost_usd, estimated_hours: estimatedHours, cost_breakdown: cost.cost_breakdown };
}
