import { readFileSync } from 'node:fs';
import { ItoError, parseManifest, type Manifest, type StageName } from '@ito/contracts';
import {
  assignTasks,
  buildPipeline,
  buildStageSpec,
  foldRun,
  startStageEvents,
  type LivePlan,
  type Pipeline,
  type RunAggregate,
  type RunEvent,
} from '@ito/domain';

export const RUN = `run_${'1'.repeat(32)}`;
export const NODES = [`node_${'a'.repeat(32)}`, `node_${'b'.repeat(32)}`];

export function exampleManifest(change?: (m: Manifest) => void): Manifest {
  const parsed = parseManifest(readFileSync(new URL('../../../../examples/manifest.json', import.meta.url), 'utf8'));
  if (!parsed.ok) throw new Error('the example manifest must parse');
  const m = structuredClone(parsed.manifest);
  change?.(m);
  return m;
}

/** Token phases as the planner gives them for the example (main, long context, post-training). */
export const PHASES = [
  { phase: 'pretrain+mid_train', tokens: 39_900_000_000, sequence_length: 8192 },
  { phase: 'long_context', tokens: 2_100_000_000, sequence_length: 65536 },
  { phase: 'sft', tokens: 4_000_000_000, sequence_length: 8192 },
  { phase: 'dpo', tokens: 560_000_000, sequence_length: 8192 },
  { phase: 'rlvr', tokens: 840_000_000, sequence_length: 8192 },
];

export function pipelineFor(m: Manifest = exampleManifest()): Pipeline {
  return buildPipeline(m, PHASES, { rate_usd_per_gpu_hour: 2.5, gpus_per_node: 8 }, 8e9);
}

export const PLAN: LivePlan = {
  precision: 'fp8',
  parameters: 8e9,
  family: 'llama',
  nodes: 2,
  gpus_per_node: 8,
  layouts: [
    { sequence_length: 8192, tp: 1, pp: 1, dp: 16, cp: 1, micro_batch: 2, global_batch_sequences: 512, tokens_per_s: 170_000 },
    { sequence_length: 65536, tp: 1, pp: 1, dp: 4, cp: 4, micro_batch: 1, global_batch_sequences: 64, tokens_per_s: 90_000 },
  ],
  checkpoint_bytes: 8e9 * 14,
  estimated_cost_usd: 3206.8,
};

export function reserved(pipeline: Pipeline = pipelineFor()): RunEvent[] {
  return [
    {
      type: 'RunReserved',
      data: {
        run_id: RUN,
        tenant_id: `ten_${'2'.repeat(32)}`,
        booking_id: `bkg_${'3'.repeat(32)}`,
        manifest_digest: `sha256:${'4'.repeat(64)}`,
        idempotency_key: 'k1',
        confirmation_ref: `cfm_${'5'.repeat(32)}`,
        estimated_cost_usd: 3206.8,
        incremental_cost_usd: 10.93,
        plan: {},
      },
    },
    { type: 'RunConfirmed', data: { run_id: RUN, confirmation_ref: `cfm_${'5'.repeat(32)}` } },
    { type: 'PipelinePlanned', data: { run_id: RUN, pipeline } },
  ];
}

/** Data prep and planning done: the run is ready for its first node stage. */
export function planned(pipeline?: Pipeline): RunEvent[] {
  return [
    ...reserved(pipeline),
    { type: 'StageStarted', data: { run_id: RUN, stage: 'data_prep', attempt: 1 } },
    { type: 'StageCompleted', data: { run_id: RUN, stage: 'data_prep', attempt: 1 } },
    { type: 'StageStarted', data: { run_id: RUN, stage: 'planning', attempt: 1 } },
    { type: 'PlanComputed', data: { run_id: RUN, plan: PLAN } },
    { type: 'StageCompleted', data: { run_id: RUN, stage: 'planning', attempt: 1 } },
  ];
}

/** Appends the StageStarted of a node stage on both nodes (one for evaluation), as the worker would. */
export function started(history: RunEvent[], stage: StageName, attempt = 1, resume: Parameters<typeof buildStageSpec>[3] = null): RunEvent[] {
  const state = foldRun(history);
  const nodes = stage.startsWith('eval_') ? NODES.slice(0, 1) : NODES;
  const spec = buildStageSpec(state, stage, attempt, resume, nodes.length);
  return [...history, ...startStageEvents(state, { type: 'StartStage', stage, attempt, resume }, { tasks: assignTasks(RUN, stage, attempt, nodes), spec })];
}

export function fold(events: RunEvent[]): RunAggregate {
  return foldRun(events);
}

export function refusal(fn: () => unknown): { code: string; details: Record<string, unknown> | undefined; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof ItoError) return { code: err.code, details: err.details, message: err.message };
    throw err;
  }
  throw new Error('expected a refusal');
}
