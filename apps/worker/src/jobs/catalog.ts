import { z } from 'zod';
import { STAGE_NAMES, runIdSchema, checkpointIdSchema } from '@ito/contracts';
import { defineJob, defineJobs } from '@ito/queue';

/** Job data names a run and what to do; never a secret, never the manifest (handlers read the ledger). */
const runRef = { tenant_id: z.string().regex(/^ten_[0-9a-f]{32}$/), run_id: runIdSchema };

/** Every pipeline job counts against its tenant's share of the worker: one tenant's backlog never takes every slot. */
const byTenant = (d: { tenant_id: string }) => d.tenant_id;

/**
 * The pipeline's jobs. Ids are deterministic, from the decision they carry out (`stage:<run>:<stage>@<attempt>`:
 * BullMQ allows a custom id with ':' only in exactly three parts, so the attempt joins the stage with '@'), so
 * the orchestrator may enqueue the same decision as often as it sees it. Every handler re-derives the decision
 * from the run's state before acting: a late, repeated or redelivered job appends nothing.
 */
export const pipelineJobs = defineJobs({
  'stage.start': defineJob({
    queue: 'pipeline-stages',
    schema: z.strictObject({ ...runRef, stage: z.enum(STAGE_NAMES), attempt: z.number().int().min(1).max(10_000) }),
    // Data prep hashes data files, so a stage start may take a while; waiting for nodes is a retry, not a wait.
    timeoutMs: 10 * 60_000,
    jobId: (d) => `stage:${d.run_id}:${d.stage}@${d.attempt}`,
    // Nodes that are busy or not yet heard from are waited for: a fixed 1 s retry for up to ten minutes.
    attempts: 600,
    fairShareKey: byTenant,
    backoffType: 'fixed',
    backoffMs: 1_000,
  }),
  'run.finish': defineJob({
    queue: 'pipeline-runs',
    schema: z.strictObject({ ...runRef, outcome: z.enum(['succeed', 'fail', 'cancel', 'budget']) }),
    timeoutMs: 60_000,
    jobId: (d) => `finish:${d.run_id}:${d.outcome}`,
    attempts: 10,
    fairShareKey: byTenant,
  }),
  'run.cleanup': defineJob({
    queue: 'pipeline-storage',
    schema: z.strictObject(runRef),
    timeoutMs: 10 * 60_000,
    jobId: (d) => `cleanup:${d.run_id}:all`,
    attempts: 10,
    fairShareKey: byTenant,
  }),
  'checkpoint.prune': defineJob({
    queue: 'pipeline-storage',
    schema: z.strictObject({ ...runRef, checkpoint_id: checkpointIdSchema }),
    timeoutMs: 5 * 60_000,
    jobId: (d) => `prune:${d.run_id}:${d.checkpoint_id}`,
    attempts: 10,
    fairShareKey: byTenant,
  }),
});

export type PipelineJobs = typeof pipelineJobs;
