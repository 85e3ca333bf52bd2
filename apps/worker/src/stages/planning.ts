import { ItoError, type Manifest } from '@ito/contracts';
import { checkBookingUsable, type LivePlan } from '@ito/domain';
import { PLAN_ASSUMPTIONS } from '@ito/planner';
import { getBooking, planFor } from '@ito/runs';
import type { PipelineResources } from '../resources.js';

export type PlanningOutcome = { ok: true; plan: LivePlan } | { ok: false; reason: string; code: string };

/**
 * Re-plans the run on the booking as it is now (the desk may have changed it since the confirmation): the
 * layouts every node stage's tasks are built from. A booking that is no longer usable, or a plan that no longer
 * fits, ends the run with the planner's own code and reason.
 */
export async function replan(res: PipelineResources, tenantId: string, bookingId: string, manifest: Manifest, nodesLeft?: number): Promise<PlanningOutcome> {
  const now = res.now();
  try {
    const usable = checkBookingUsable(await getBooking(res.pool, tenantId, bookingId), tenantId, bookingId, now);
    // After a node failure with no spare to take its place: the same booking with the nodes that are left.
    const booking = nodesLeft !== undefined ? { ...usable, nodes: nodesLeft } : usable;
    const outcome = planFor(manifest, booking, now);
    const p = outcome.plan;
    return {
      ok: true,
      plan: {
        precision: p.precision,
        parameters: p.parameters,
        family: manifest.model.family,
        nodes: booking.nodes,
        gpus_per_node: booking.gpus_per_node,
        layouts: p.stage_plans.map((s) => ({
          sequence_length: s.sequence_length,
          tp: s.tp,
          pp: s.pp,
          dp: s.dp,
          cp: s.cp,
          micro_batch: s.micro_batch,
          global_batch_sequences: s.global_batch_sequences,
          tokens_per_s: s.tokens_per_s,
        })),
        checkpoint_bytes: p.parameters * PLAN_ASSUMPTIONS.checkpointBytesPerParam,
        estimated_cost_usd: outcome.estimated_cost_usd,
        rlvr_rollout_nodes: p.post_training.find((s) => s.stage === 'rlvr')?.rollout_nodes ?? 0,
      },
    };
  } catch (err) {
    if (err instanceof ItoError) return { ok: false, reason: `planning on the booking's live topology refused: ${err.message}`, code: err.code };
    throw err;
  }
}
