import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quickExecutor } from '../../../test/support/quick-executor.js';
import { runEvents, seedTenant, startPipeline, submitRun, waitForState, type Pipeline } from '../../../test/support/pipeline.js';

describe('the pipeline on the Redis backend', () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline('redis');
  });
  afterAll(async () => p.close());

  it('drives a confirmed run through every stage to succeeded', async () => {
    const seed = await seedTenant(p.api);
    await p.startNodes(seed, () => quickExecutor());
    const runId = await submitRun(p.api, seed);
    await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed'], 60_000);
    const events = await runEvents(p.api, seed, runId);
    const stages = events.filter((e) => e.type === 'StageStarted').map((e) => e.data.stage);
    expect(stages).toEqual(['data_prep', 'planning', 'pretrain', 'eval_pretrain', 'mid_train', 'eval_mid_train', 'long_context', 'eval_long_context', 'sft', 'dpo', 'rlvr', 'eval_post_training']);
    expect(events.at(-1)!.type).toBe('RunSucceeded');
    if (process.env.DUMP) console.log(events.map((e) => `${e.type} ${JSON.stringify(e.data).slice(0, 160)}`).join('\n'));
  });
});
