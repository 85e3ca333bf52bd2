import { describe, expect, it } from 'vitest';
import { decideTaskReport, taskIdFor, type RunEvent } from '@ito/domain';
import { NODES, RUN, fold, planned, refusal, started } from './support/run-history.js';

const CKPT = `ckpt_${'c'.repeat(32)}`;
const FROM = { checkpoint_id: CKPT, uri: 's3://bucket/ckpt/run/pretrain/step-100', step: 100 };

/** Attempt 1 of pretraining failed; attempt 2 resumes from the checkpoint at step 100. */
function resumed(): RunEvent[] {
  const first = started(planned(), 'pretrain');
  const failed: RunEvent[] = [
    ...first,
    { type: 'StageFailed', data: { run_id: RUN, stage: 'pretrain', attempt: 1, reason: 'crash', failure: 'crash' } },
  ];
  return started(failed, 'pretrain', 2, { from: FROM, skip_steps: null, recompute_steps: 20, reason: 'retry' });
}

const T0 = taskIdFor(RUN, 'pretrain', 2, 0);
const report = (body: Partial<{ attempt: number; seq: number; checkpoint_id: string; step: number; bytes: number; restore_seconds: number }> = {}, node = NODES[0]!, task = T0) => ({
  type: 'restored' as const,
  task_id: task,
  node_id: node,
  body: { attempt: 2, seq: 1, checkpoint_id: CKPT, step: 100, bytes: 8e9, restore_seconds: 4.5, ...body },
});

describe('checkpoint restored', () => {
  it('a resumed task`s restore is recorded once, with what it read and how long it took', () => {
    const h = resumed();
    const d = decideTaskReport(fold(h), report());
    expect(d.events).toEqual([
      { type: 'CheckpointRestored', data: { run_id: RUN, task_id: T0, stage: 'pretrain', attempt: 2, checkpoint_id: CKPT, step: 100, bytes: 8e9, restore_seconds: 4.5, seq: 1 } },
    ]);
    const after = fold([...h, ...d.events]);
    // The same report again (a resend) and a second restore of the task (a new seq) both append nothing.
    expect(decideTaskReport(after, report())).toMatchObject({ events: [], duplicate: true });
    expect(decideTaskReport(after, report({ seq: 2 }))).toMatchObject({ events: [], duplicate: true });
    // The other task of the attempt records its own.
    expect(decideTaskReport(after, report({}, NODES[1]!, taskIdFor(RUN, 'pretrain', 2, 1))).events.map((e) => e.type)).toEqual(['CheckpointRestored']);
  });

  it('fenced by attempt, and only the checkpoint the attempt resumes from', () => {
    const h = resumed();
    expect(refusal(() => decideTaskReport(fold(h), report({ attempt: 1 }))).code).toBe('invalid_state');
    expect(refusal(() => decideTaskReport(fold(h), report({ checkpoint_id: `ckpt_${'d'.repeat(32)}` }))).code).toBe('validation_failed');
    expect(refusal(() => decideTaskReport(fold(h), report({ step: 99 }))).code).toBe('validation_failed');
    // A first attempt resumes from nothing: a restore report is refused.
    const fresh = started(planned(), 'pretrain');
    expect(refusal(() => decideTaskReport(fold(fresh), report({ attempt: 1 }, NODES[0]!, taskIdFor(RUN, 'pretrain', 1, 0)))).code).toBe('validation_failed');
  });
});
