import { describe, expect, it } from 'vitest';
import { renderPlanAnswer } from '../src/human/plan.js';

describe('ito plan, for people', () => {
  it('shows the post-training trainer/rollout split as a table', () => {
    const text = renderPlanAnswer({
      plan: {
        tp: 1,
        post_training: [
          { stage: 'sft', trainer_nodes: 2, rollout_nodes: 0, separated: false },
          { stage: 'rlvr', trainer_nodes: 1, rollout_nodes: 1, separated: true },
        ],
      },
    });
    const section = text.slice(text.indexOf('post-training split:'));
    const rows = section.split('\n').slice(1, 4).map((l) => l.trim().split(/\s+/));
    expect(rows).toEqual([
      ['STAGE', 'TRAINER_NODES', 'ROLLOUT_NODES', 'SEPARATED'],
      ['sft', '2', '0', 'no'],
      ['rlvr', '1', '1', 'yes'],
    ]);
  });

  it('leaves the section out when the plan has no post-training', () => {
    expect(renderPlanAnswer({ plan: { tp: 1, post_training: [] } })).not.toContain('post-training split');
  });
});
