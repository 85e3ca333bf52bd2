import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from './support/cluster.js';
import { invariantViolations } from './support/ledger-checks.js';

const stream = (...events: Array<[string, Record<string, unknown>]>): LedgerEvent[] =>
  events.map(([type, data], i) => ({ position: 100 + i, version: i + 1, type, recorded_at: '2026-12-04T06:00:00.000Z', data }));

describe('the chaos ledger check', () => {
  it('passes a whole stream and names what was recorded twice or out of sequence', () => {
    const whole = stream(
      ['RunReserved', {}],
      ['StageStarted', { stage: 'pretrain', attempt: 1 }],
      ['ProgressRecorded', { task_id: 't1', seq: 1 }],
      ['CheckpointSaved', { checkpoint_id: 'c1', task_id: 't1', seq: 2 }],
      ['StageFailed', { stage: 'pretrain', attempt: 1 }],
      ['StageStarted', { stage: 'pretrain', attempt: 2 }],
      ['TaskCompleted', { task_id: 't2', seq: 1 }],
      ['StageCompleted', { stage: 'pretrain', attempt: 2 }],
      ['RunSucceeded', {}],
    );
    expect(invariantViolations(whole)).toEqual([]);
    expect(invariantViolations([...whole, ...stream(['StageCompleted', { stage: 'pretrain', attempt: 3 }]).map((e) => ({ ...e, version: 10 }))])).toEqual(['recorded twice: StageCompleted:pretrain']);
    const resent = stream(['ProgressRecorded', { task_id: 't1', seq: 1 }], ['CheckpointSaved', { checkpoint_id: 'c9', task_id: 't1', seq: 1 }]);
    expect(invariantViolations(resent)).toEqual(['recorded twice: report:t1:1']);
    const twoEnds = stream(['RunSucceeded', {}], ['RunFailed', {}]);
    expect(invariantViolations(twoEnds)).toEqual(['recorded twice: terminal']);
    const gap = whole.filter((e) => e.version !== 3);
    expect(invariantViolations(gap)[0]).toMatch(/^stream versions are not 1..n in order: at index 2 CheckpointSaved has version 4/);
  });
});
