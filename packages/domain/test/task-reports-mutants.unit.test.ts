import { describe, expect, it } from 'vitest';
import { decideTaskReport, taskIdFor } from '@ito/domain';
import { NODES, RUN, fold, planned, started } from './support/run-history.js';

/** Optional report fields reach the ledger exactly when the agent sent them: never invented, never dropped. */
const T0 = taskIdFor(RUN, 'pretrain', 1, 0);
const T1 = taskIdFor(RUN, 'pretrain', 1, 1);
const running = () => fold(started(planned(), 'pretrain'));

describe('task reports carry the optional fields the agent sent, and only those', () => {
  it('progress: loss, throughput and message when sent', () => {
    const full = decideTaskReport(running(), {
      type: 'progress',
      task_id: T0,
      node_id: NODES[0]!,
      body: { attempt: 1, seq: 1, step: 10, tokens: 40, elapsed_s: 5, loss: 3.5, throughput_tokens_per_s: 1000, message: 'warm' },
    });
    expect(full.events[0]).toEqual({
      type: 'ProgressRecorded',
      data: { run_id: RUN, stage: 'pretrain', attempt: 1, task_id: T0, seq: 1, step: 10, tokens: 40, elapsed_s: 5, loss: 3.5, throughput_tokens_per_s: 1000, message: 'warm' },
    });
    const bare = decideTaskReport(running(), { type: 'progress', task_id: T0, node_id: NODES[0]!, body: { attempt: 1, seq: 1, step: 10, tokens: 40, elapsed_s: 5 } });
    expect(bare.events[0]!.data).toEqual({ run_id: RUN, stage: 'pretrain', attempt: 1, task_id: T0, seq: 1, step: 10, tokens: 40, elapsed_s: 5 });
  });

  it('a failure: its step and elapsed time when sent', () => {
    const full = decideTaskReport(running(), { type: 'fail', task_id: T1, node_id: NODES[1]!, body: { attempt: 1, seq: 1, kind: 'crash', reason: 'segfault', step: 7, elapsed_s: 9 } });
    expect(full.events[0]!.data).toMatchObject({ step: 7, elapsed_s: 9, failure: 'crash', reason: 'segfault' });
    const bare = decideTaskReport(running(), { type: 'fail', task_id: T1, node_id: NODES[1]!, body: { attempt: 1, seq: 1, kind: 'crash', reason: 'segfault' } });
    expect(bare.events[0]!.data).not.toHaveProperty('step');
    expect(bare.events[0]!.data).not.toHaveProperty('elapsed_s');
  });

  it('a completion: its step when sent', () => {
    const full = decideTaskReport(running(), { type: 'complete', task_id: T1, node_id: NODES[1]!, body: { attempt: 1, seq: 1, step: 12, elapsed_s: 3 } });
    expect(full.events).toEqual([{ type: 'TaskCompleted', data: { run_id: RUN, task_id: T1, stage: 'pretrain', attempt: 1, node_id: NODES[1], seq: 1, elapsed_s: 3, step: 12 } }]);
    const bare = decideTaskReport(running(), { type: 'complete', task_id: T1, node_id: NODES[1]!, body: { attempt: 1, seq: 1, elapsed_s: 3 } });
    expect(bare.events[0]!.data).not.toHaveProperty('step');
  });
});
