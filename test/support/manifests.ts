import { EXAMPLE_MANIFEST } from './api.js';

/**
 * Variants of the example manifest for pipeline scenarios. `small` trains only a 2B-token pretrain stage and its
 * evaluation (about three planned hours on the 2×8 H200 fixture booking), so a scenario at a slowish simulated
 * clock still takes seconds.
 */
export function manifestVariant(change: (m: any) => void): string {
  const m = JSON.parse(EXAMPLE_MANIFEST);
  change(m);
  return JSON.stringify(m, null, 2);
}

export function smallManifest(change: (m: any) => void = () => undefined): string {
  return manifestVariant((m) => {
    m.target.tokens = 2_000_000_000;
    m.target.curriculum = ['pretrain'];
    delete m.target.long_context_length;
    m.post_training.recipe = [];
    m.eval.gates = { pretrain: { heldout_loss: { max: 10 } } };
    change(m);
  });
}

/**
 * Post-training only, with the recipe reduced to `recipe` (RLVR by default): on the 2-node fixture booking the
 * plan gives RLVR one trainer and one rollout node.
 */
export function postTrainingManifest(recipe: unknown[] = [{ stage: 'rlvr', algorithm: 'grpo', dapo: true, verifier: 'addition', max_policy_staleness: 1 }], change: (m: any) => void = () => undefined): string {
  return manifestVariant((m) => {
    m.target.objective = 'post_train_only';
    m.target.tokens = 2_000_000_000;
    m.target.curriculum = ['post_training'];
    delete m.target.long_context_length;
    m.post_training.recipe = recipe;
    m.eval.gates = { post_training: { heldout_loss: { max: 10 } } };
    change(m);
  });
}
