import { formatBytes, formatLoss } from '@ito/contracts';
import { renderAuditVerdict } from '../src/human/audit-views.js';
import { progressLine } from '../src/human/format.js';
import { renderCheckpoints, renderConfirmation, renderMetrics, renderRun } from '../src/human/views.js';
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

describe('figures for people, exact values left to --json', () => {
  it('sizes in decimal units and losses to four decimals', () => {
    expect(formatBytes(112_000_000_000)).toBe('112 GB');
    expect(formatBytes(1_048_576)).toBe('1.05 MB');
    expect(formatBytes(999)).toBe('999 bytes');
    expect(formatLoss(2.0971234567891234)).toBe('2.0971');
    const checkpoints = renderCheckpoints({ state: 'training', checkpoints: [{ checkpoint_id: 'ckpt_1', stage: 'pretrain', step: 10, bytes: 112_000_000_000, save_seconds: 0.3, bandwidth_bytes_per_s: 373_333_333_333, uri: 's3://x/1' }] });
    expect(checkpoints).toContain('112 GB');
    expect(checkpoints).toContain('373 GB/s');
    expect(checkpoints).not.toContain('112000000000');
    const metrics = renderMetrics({ latest: { stage: 'pretrain', step: 4, tokens: 100, loss: 2.0971234567891234 }, series: [{ stage: 'pretrain', step: 4, tokens: 100, loss: 2.5387123456789 }], checkpoints: 1 });
    expect(metrics).toContain('2.0971');
    expect(metrics).toContain('2.5387');
    expect(metrics).not.toMatch(/\d\.\d{6,}/);
  });

  it('an empty checkpoint list says whether none was saved yet or cleanup deleted them', () => {
    expect(renderCheckpoints({ state: 'training', checkpoints: [] })).toBe('(no checkpoints yet)\n');
    expect(renderCheckpoints({ state: 'cleaned', checkpoints: [] })).toBe('(no checkpoints left: cleanup deleted them)\n');
  });

  it("an audit verdict's head is a sentence, not a JSON object", () => {
    const text = renderAuditVerdict({ tenant_id: 'ten_1', verified: true, checked: 12, head: { tenant_seq: 12, hash: 'ab'.repeat(32) } });
    expect(text).toContain(`event 12 of the tenant's chain, hash ${'ab'.repeat(32)}`);
    expect(text).not.toContain('{');
  });
});

describe('what a run waits for, and what an approver approves', () => {
  it('status prints each waiting reason in the server words, and --watch puts it on its progress line', () => {
    const run = { run_id: 'run_1', state: 'planning', waiting: [{ reason: 'nodes', live: 0, needed: 2, message: 'waiting for nodes: 0 of 2 live' }] };
    expect(renderRun(run)).toContain('\nwaiting for nodes: 0 of 2 live\n');
    expect(progressLine(run)).toBe('state planning · waiting for nodes: 0 of 2 live');
    expect(renderRun({ ...run, waiting: [] })).not.toContain('waiting');
  });

  it("the first step's wait shows once, whether the server sends it as waiting_for, as a waiting member, or both", () => {
    const waitingFor = 'first step on node gpu-01 (allowance 300 s, 12 s so far)';
    const run = {
      run_id: 'run_1',
      state: 'post_training',
      stage: 'rlvr',
      waiting_for: waitingFor,
      waiting: [{ reason: 'first_step', waiting_for: waitingFor, message: `waiting for ${waitingFor}` }],
    };
    const text = renderRun(run);
    expect(text.match(/first step on node gpu-01/g)).toHaveLength(1);
    expect(text).toMatch(/\nwaiting_for\s+first step on node gpu-01/);
    expect(progressLine(run)).toBe(`state post_training · stage rlvr · waiting for ${waitingFor}`);
    const listOnly = { ...run, waiting_for: undefined };
    expect(renderRun(listOnly)).toContain(`\nwaiting for ${waitingFor}\n`);
    expect(progressLine(listOnly)).toBe(`state post_training · stage rlvr · waiting for ${waitingFor}`);
  });

  it('a train confirmation says which figure is new spend and which is the booking', () => {
    const text = renderConfirmation({ confirmation_ref: 'cfm_1', status: 'pending', action: 'train.create', cost_usd: 3206.8, incremental_cost_usd: 10.93, max_incremental_cost_usd: 4000, plan: { tp: 1 } });
    expect(text).toContain("approving: $10.93 of new spend beyond the booking (checkpoint storage and egress; the manifest caps it at $4,000.00), and the use of $3,206.80 of the booking's GPU time");
  });
});
