import { rlvrSettings, type Manifest } from '@ito/contracts';
import type { BookingTopology, PostTrainingPlacement } from './types.js';

export type PlacementResult = { ok: true; placements: PostTrainingPlacement[]; reasons: string[] } | { ok: false; code: 'plan_refused'; reason: string };

/**
 * Where each post-training step runs on the booking. SFT and DPO train on every node. RLVR splits the nodes into
 * trainer and rollout nodes when the recipe requires it, or prefers it and the booking has two nodes or more; a
 * combination the booking cannot hold is refused here, before any confirmation is asked for. Pure.
 */
export function planPostTraining(manifest: Manifest, booking: Pick<BookingTopology, 'nodes'>): PlacementResult {
  if (!manifest.target.curriculum.includes('post_training')) return { ok: true, placements: [], reasons: [] };
  const nodes = booking.nodes;
  const placements: PostTrainingPlacement[] = [];
  const reasons: string[] = [];
  for (const step of manifest.post_training.recipe) {
    if (step.stage !== 'rlvr') {
      placements.push({ stage: step.stage, trainer_nodes: nodes, rollout_nodes: 0, separated: false });
      continue;
    }
    const s = rlvrSettings(step);
    if (s.max_response_tokens > manifest.target.sequence_length) {
      return refuse(`rlvr: max_response_tokens ${s.max_response_tokens} exceeds the target sequence length ${manifest.target.sequence_length}`);
    }
    if (s.separation === 'required' && nodes < 2) {
      return refuse(`rlvr requires trainer and rollout on separate nodes (separation: required) but the booking has ${nodes} node; book 2 or more, or allow colocation`);
    }
    const separate = s.separation === 'required' || (s.separation === 'preferred' && nodes >= 2);
    if (!separate) {
      if (step.rollout_nodes !== undefined) return refuse(`rlvr: rollout_nodes ${step.rollout_nodes} needs separate rollout nodes, but the booking has ${nodes} node`);
      placements.push({ stage: 'rlvr', trainer_nodes: nodes, rollout_nodes: 0, separated: false });
      reasons.push(`rlvr: trainer and rollout share ${nodes === 1 ? 'the booking\'s one node' : `all ${nodes} nodes`} (separation: ${s.separation}); rollouts at most ${s.max_policy_staleness} policy versions old are trained on.`);
      continue;
    }
    const rollout = step.rollout_nodes ?? Math.floor(nodes / 2);
    if (rollout >= nodes) return refuse(`rlvr: rollout_nodes ${rollout} leaves no trainer node of the booking's ${nodes}`);
    placements.push({ stage: 'rlvr', trainer_nodes: nodes - rollout, rollout_nodes: rollout, separated: true });
    reasons.push(
      `rlvr: ${nodes - rollout} trainer node(s) and ${rollout} rollout node(s) (separation: ${s.separation}); rollout batches are tagged with their policy version and trained on only when at most ${s.max_policy_staleness} versions behind.`,
    );
  }
  return { ok: true, placements, reasons };
}

function refuse(reason: string): PlacementResult {
  return { ok: false, code: 'plan_refused', reason };
}
