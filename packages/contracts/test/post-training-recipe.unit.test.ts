import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseManifest, rlvrSettings, type RlvrStep } from '@ito/contracts';

const example = readFileSync(new URL('../../../examples/manifest.json', import.meta.url), 'utf8');
const withRecipe = (change: (recipe: any[]) => void) => {
  const m = JSON.parse(example);
  change(m.post_training.recipe);
  return parseManifest(JSON.stringify(m));
};
const paths = (r: ReturnType<typeof parseManifest>) => (r.ok ? [] : r.issues.map((i) => `${i.path}: ${i.message}`));

describe('the post-training recipe options', () => {
  it('accepts every named SFT, DPO and RLVR option with sound values', () => {
    const r = withRecipe((recipe) => {
      Object.assign(recipe[0], { learning_rate: 2e-5, batch_size: 64 });
      Object.assign(recipe[1], { reference_policy: 'previous_stage', learning_rate: 1e-6 });
      Object.assign(recipe[2], {
        group_size: 16,
        kl_weight: 0.01,
        clip_eps_low: 0.2,
        clip_eps_high: 0.28,
        dynamic_sampling: true,
        token_level_loss: true,
        overlong_shaping: true,
        max_response_tokens: 4096,
        overlong_buffer_tokens: 512,
        separation: 'required',
        rollout_nodes: 1,
      });
    });
    expect(paths(r)).toEqual([]);
  });

  it('accepts a reference policy given as a checkpoint URI', () => {
    expect(paths(withRecipe((recipe) => (recipe[1].reference_policy = 's3://acme-checkpoints/sft/step-100')))).toEqual([]);
  });

  it('refuses impossible option values, naming each', () => {
    const cases: Array<[(recipe: any[]) => void, string]> = [
      [(r) => (r[2].clip_eps_high = 0.1), '$.post_training.recipe[2].clip_eps_high: must be at least clip_eps_low'],
      [(r) => (r[2].overlong_buffer_tokens = 4096), '$.post_training.recipe[2].overlong_buffer_tokens: must be smaller than max_response_tokens'],
      [(r) => Object.assign(r[2], { overlong_shaping: false, overlong_buffer_tokens: 10 }), '$.post_training.recipe[2].overlong_buffer_tokens: only with overlong_shaping'],
      [(r) => Object.assign(r[2], { separation: 'colocated', rollout_nodes: 1 }), '$.post_training.recipe[2].rollout_nodes: only when trainer and rollout are separated'],
    ];
    for (const [change, expected] of cases) expect(paths(withRecipe(change))).toEqual([expected]);
    for (const change of [
      (r: any[]) => (r[2].group_size = 1),
      (r: any[]) => (r[2].kl_weight = -1),
      (r: any[]) => (r[2].separation = 'anywhere'),
      (r: any[]) => (r[1].reference_policy = 'the sft one'),
      (r: any[]) => (r[0].learning_rate = 0),
    ]) {
      expect(withRecipe(change).ok).toBe(false);
    }
  });

  it('fills the DAPO defaults from the dapo switch, and each option overrides its default', () => {
    const base: RlvrStep = { stage: 'rlvr', algorithm: 'grpo', dapo: true, verifier: 'addition', max_policy_staleness: 2 };
    expect(rlvrSettings(base)).toMatchObject({ clip_eps_low: 0.2, clip_eps_high: 0.28, dynamic_sampling: true, token_level_loss: true, overlong_shaping: true, group_size: 8, kl_weight: 0, separation: 'preferred' });
    expect(rlvrSettings({ ...base, dapo: false })).toMatchObject({ clip_eps_high: 0.2, dynamic_sampling: false, token_level_loss: false, overlong_shaping: false });
    expect(rlvrSettings({ ...base, dapo: false, dynamic_sampling: true }).dynamic_sampling).toBe(true);
  });

  it('accepts gates for the recipe\'s own steps, and refuses one for a step the recipe does not run', () => {
    const m = JSON.parse(example);
    m.eval.gates.dpo = { ifeval: { min: 0.5 } };
    expect(parseManifest(JSON.stringify(m)).ok).toBe(true);
    m.post_training.recipe = m.post_training.recipe.filter((s: any) => s.stage !== 'dpo');
    const r = parseManifest(JSON.stringify(m));
    expect(r.ok ? [] : r.issues.map((i) => i.message)).toEqual(['a gate for a stage the curriculum does not run']);
  });
});
