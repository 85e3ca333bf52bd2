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

describe('ito metrics, for people', () => {
  it('shows RLVR rollout counts and the staleness histogram', async () => {
    const { renderMetrics } = await import('../src/human/views.js');
    const text = renderMetrics({
      rollouts: [{ stage: 'rlvr', attempt: 1, accepted: 12, rejected: 4, pending: 0, dropped_groups: 7, policy_version: 12, staleness_histogram: { '0': { accepted: 9, rejected: 0 }, '3': { accepted: 0, rejected: 4 } } }],
    });
    const row = text.split('\n').find((l) => l.trim().startsWith('rlvr'))!.trim().split(/\s+/);
    expect(row).toEqual(['rlvr', '1', '12', '4', '0', '7', '12', '0:9/0', '3:0/4']);
  });

  it('shows each incident with its latencies and the SLOs it breached', async () => {
    const { renderMetrics } = await import('../src/human/views.js');
    const text = renderMetrics({
      incidents: [
        { kind: 'node_lost', node_id: 'node_a', detected_at: '2026-12-03T12:00:06.400Z', detection_latency_s: 6.4, resume_latency_s: 71, breaches: [{ slo: 'resume', measured_s: 71, target_s: 60, bound: 'target' }] },
        { kind: 'hang', node_id: 'node_b', detected_at: '2026-12-03T13:00:00.000Z', detection_latency_s: 12, resume_latency_s: null, breaches: [] },
      ],
    });
    expect(text).toContain('incidents:');
    const lost = text.split('\n').find((l) => l.trim().startsWith('node_lost'))!.trim();
    expect(lost.split(/\s{2,}/)).toEqual(['node_lost', 'node_a', expect.stringMatching(/^2026-12-03T12:00:06.400Z/), '6.4 s', '71 s', 'resume > 60 s (target)']);
    const hung = text.split('\n').find((l) => l.trim().startsWith('hang'))!.trim();
    expect(hung.split(/\s{2,}/)).toEqual(['hang', 'node_b', expect.stringMatching(/^2026-12-03T13:00:00.000Z/), '12 s', '-', '-']);
  });
});

describe('ito status, for people', () => {
  it('shows what the running stage waits for while it waits, and nothing of it otherwise', async () => {
    const { renderRun } = await import('../src/human/views.js');
    const waiting = 'first step on node gpu-01 (allowance 600 s, 12 s so far)';
    const text = renderRun({ run_id: 'run_1', state: 'post_training', stage: 'rlvr', failure: null, waiting_for: waiting });
    expect(text.split('\n').find((l) => l.startsWith('waiting_for'))).toMatch(/^waiting_for\s+first step on node gpu-01 \(allowance 600 s, 12 s so far\)$/);
    expect(renderRun({ run_id: 'run_1', state: 'succeeded', stage: null, failure: null, waiting_for: null })).not.toContain('waiting_for');
  });

  it('--watch names the wait on its progress line, and only while there is one', async () => {
    const { progressLine } = await import('../src/human/format.js');
    const waiting = 'first step on node gpu-01 (allowance 300 s, 12 s so far)';
    expect(progressLine({ state: 'post_training', stage: 'rlvr', waiting_for: waiting })).toBe(`state post_training · stage rlvr · waiting for ${waiting}`);
    expect(progressLine({ state: 'post_training', stage: 'rlvr', waiting_for: null })).toBe('state post_training · stage rlvr');
  });
});
