import { describe, expect, it } from 'vitest';
import { evaluateGates, nextCommands, observeLoss, DEFAULT_LOSS_SPIKE_RULE, EMPTY_LOSS_TRACKER, taskIdFor, type RunEvent } from '@ito/domain';
import { NODES, PLAN, RUN, exampleManifest, fold, pipelineFor, planned, reserved, started } from './support/run-history.js';

describe('the pipeline a manifest asks for', () => {
  it('runs data prep, planning, each curriculum stage with its evaluation, then the recipe and its evaluation', () => {
    expect(pipelineFor().steps.map((s) => s.stage)).toEqual([
      'data_prep',
      'planning',
      'pretrain',
      'eval_pretrain',
      'mid_train',
      'eval_mid_train',
      'long_context',
      'eval_long_context',
      'sft',
      'dpo',
      'rlvr',
      'eval_post_training',
    ]);
  });

  it('evaluates a post-training step the manifest gates right after it, with that step\'s gates', () => {
    const m = exampleManifest((x) => {
      x.eval.gates.sft = { ifeval: { min: 0.4 } };
      x.eval.gates.rlvr = { gsm8k: { min: 0.3 } };
    });
    const steps = pipelineFor(m).steps;
    expect(steps.map((s) => s.stage).slice(-6)).toEqual(['sft', 'eval_sft', 'dpo', 'rlvr', 'eval_rlvr', 'eval_post_training']);
    expect(steps.find((s) => s.stage === 'eval_sft')).toMatchObject({ kind: 'eval', gates: { ifeval: { min: 0.4 } } });
  });

  it('splits a shared planner phase evenly and carries each stage its gates and recipe options', () => {
    const steps = pipelineFor().steps;
    expect(steps.find((s) => s.stage === 'pretrain')!.tokens).toBe(19_950_000_000);
    expect(steps.find((s) => s.stage === 'mid_train')!.tokens).toBe(19_950_000_000);
    expect(steps.find((s) => s.stage === 'long_context')!.sequence_length).toBe(65536);
    expect(steps.find((s) => s.stage === 'eval_mid_train')!.gates).toEqual({ mmlu: { min: 0.55 }, humaneval: { min: 0.35 } });
    expect(steps.find((s) => s.stage === 'dpo')!.recipe).toEqual({ data_ref: 's3://acme-training-data/preferences/v1/', beta: 0.1 });
  });

  it('leaves out what the curriculum does not run', () => {
    const m = exampleManifest((x) => {
      x.target.curriculum = ['pretrain'];
      x.eval.gates = { pretrain: x.eval.gates.pretrain! };
    });
    expect(pipelineFor(m).steps.map((s) => s.stage)).toEqual(['data_prep', 'planning', 'pretrain', 'eval_pretrain']);
  });
});

describe('evaluation gates', () => {
  it('passes bounds that hold and names every bound that does not', () => {
    expect(evaluateGates({ mmlu: { min: 0.55 }, loss: { max: 2.1 } }, { mmlu: 0.6, loss: 2.0 })).toEqual({ passed: true, failed: [] });
    expect(evaluateGates({ mmlu: { min: 0.55 }, loss: { max: 2.1 } }, { mmlu: 0.41, loss: 2.5 }).failed).toEqual(['mmlu 0.41 < min 0.55', 'loss 2.5 > max 2.1']);
    expect(evaluateGates({ a: { min: 0.5, max: 0.6 } }, { a: 0.5 }).passed).toBe(true);
    expect(evaluateGates({ a: { min: 0.5, max: 0.6 } }, { a: 0.6 }).passed).toBe(true);
  });

  it('fails a gate whose metric was not reported: never passed for want of a number', () => {
    expect(evaluateGates({ mmlu: { min: 0.1 } }, {})).toEqual({ passed: false, failed: ['mmlu was not reported'] });
    expect(evaluateGates({ mmlu: { min: 0.1 } }, { mmlu: Number.NaN }).passed).toBe(false);
  });
});

describe('the loss-spike rule', () => {
  const rule = { ...DEFAULT_LOSS_SPIKE_RULE, warmup_reports: 2, consecutive: 3, factor: 2 };
  const feed = (losses: number[]) => {
    let tracker = EMPTY_LOSS_TRACKER;
    const spikes: Array<{ at: number; from: number } | null> = [];
    losses.forEach((loss, i) => {
      const o = observeLoss(rule, tracker, (i + 1) * 10, loss);
      tracker = o.tracker;
      spikes.push(o.spike ? { at: (i + 1) * 10, from: o.spike.from_step } : null);
    });
    return spikes.filter(Boolean);
  };

  it('needs `consecutive` reports above factor × the moving average, after the warm-up', () => {
    expect(feed([2, 2, 2, 5, 5, 5])).toEqual([{ at: 60, from: 40 }]);
    expect(feed([2, 2, 2, 5, 5, 2, 5, 5])).toEqual([]);
  });

  it('ignores the warm-up and a loss just under the bar', () => {
    expect(feed([9, 9, 9])).toEqual([]);
    expect(feed([2, 2, 2, 3.9, 3.9, 3.9])).toEqual([]);
  });
});

describe('the orchestrator decider', () => {
  it('starts data prep once a run is confirmed, and nothing before its pipeline is known', () => {
    expect(nextCommands(fold(reserved()))).toEqual([{ type: 'StartStage', stage: 'data_prep', attempt: 1, resume: null }]);
    expect(nextCommands(fold(reserved().slice(0, 2)))).toEqual([]);
  });

  it('waits while a stage runs and starts the next one when it completes', () => {
    const h = started(planned(), 'pretrain');
    expect(nextCommands(fold(h))).toEqual([]);
    const done: RunEvent[] = [...h, { type: 'StageCompleted', data: { run_id: RUN, stage: 'pretrain', attempt: 1 } }];
    expect(nextCommands(fold(done))).toEqual([{ type: 'StartStage', stage: 'eval_pretrain', attempt: 1, resume: null }]);
  });

  it('succeeds the run after the last stage', () => {
    const m = exampleManifest((x) => {
      x.target.curriculum = ['pretrain'];
      x.eval.gates = {};
    });
    const h = started(started(planned(pipelineFor(m)), 'pretrain'), 'eval_pretrain');
    const done: RunEvent[] = [...h, { type: 'StageCompleted', data: { run_id: RUN, stage: 'eval_pretrain', attempt: 1 } }];
    expect(nextCommands(fold(done))).toEqual([{ type: 'SucceedRun' }]);
  });

  it('retries a failed attempt from the stage`s last checkpoint, then fails the run after the last attempt', () => {
    let h: RunEvent[] = started(planned(), 'pretrain');
    h = [
      ...h,
      { type: 'CheckpointSaved', data: { run_id: RUN, checkpoint_id: `ckpt_${'6'.repeat(32)}`, step: 400, uri: 's3://acme-checkpoints/code-8b-cpt/x/pretrain/step-400', bytes: 1, save_seconds: 1, stage: 'pretrain', attempt: 1 } },
      { type: 'ProgressRecorded', data: { run_id: RUN, stage: 'pretrain', step: 450, tokens: 1, task_id: taskIdFor(RUN, 'pretrain', 1, 0), seq: 2, attempt: 1, elapsed_s: 10 } },
      { type: 'StageFailed', data: { run_id: RUN, stage: 'pretrain', attempt: 1, reason: 'crash' } },
    ];
    expect(fold(h).status).toBe('recovering');
    const [retry] = nextCommands(fold(h));
    expect(retry).toEqual({
      type: 'StartStage',
      stage: 'pretrain',
      attempt: 2,
      resume: { from: { checkpoint_id: `ckpt_${'6'.repeat(32)}`, uri: 's3://acme-checkpoints/code-8b-cpt/x/pretrain/step-400', step: 400 }, skip_steps: null, recompute_steps: 50, reason: 'retry' },
    });
    for (const attempt of [2, 3]) {
      h = started(h, 'pretrain', attempt);
      h = [...h, { type: 'StageFailed', data: { run_id: RUN, stage: 'pretrain', attempt, reason: 'crash' } }];
    }
    // The run's reason names the last attempt's own.
    expect(nextCommands(fold(h))).toEqual([{ type: 'FailRun', reason: 'stage pretrain failed 3 times; the last attempt: crash' }]);
  });

  it('prunes checkpoints beyond keep_last, oldest first', () => {
    let h = started(planned(), 'pretrain');
    for (const step of [100, 200, 300, 400, 500]) {
      h = [...h, { type: 'CheckpointSaved', data: { run_id: RUN, checkpoint_id: `ckpt_${String(step).padStart(32, '0')}`, step, uri: `s3://b/${step}`, bytes: 1, save_seconds: 1, stage: 'pretrain', attempt: 1 } }];
    }
    expect(nextCommands(fold(h)).map((c) => (c.type === 'PruneCheckpoint' ? c.uri : c.type))).toEqual(['s3://b/100', 's3://b/200']);
  });

  it('finishes a cancel, waits for an operator, and does nothing once the run has ended', () => {
    const h = started(planned(), 'pretrain');
    expect(nextCommands(fold([...h, { type: 'CancelRequested', data: { run_id: RUN, confirmation_ref: 'c' } }]))).toEqual([{ type: 'FinishCancel' }]);
    expect(nextCommands(fold([...h, { type: 'RestartProposed', data: { run_id: RUN, from_checkpoint_id: null, reason: 'spike' } }]))).toEqual([]);
    expect(nextCommands(fold([...h, { type: 'RunFailed', data: { run_id: RUN, reason: 'x' } }]))).toEqual([]);
    expect(nextCommands(fold([...h, { type: 'EvalGateFailed', data: { run_id: RUN, stage: 'pretrain', metrics: {}, failed: ['x'] } }]))).toEqual([]);
  });

  it('builds every task of an attempt from the live plan, one per node, ids fixed by run, stage, attempt and rank', () => {
    const h = started(planned(), 'long_context');
    const s = fold(h).current!;
    expect(s.tasks.map((t) => [t.node_id, t.rank, t.task_id])).toEqual([
      [NODES[0], 0, taskIdFor(RUN, 'long_context', 1, 0)],
      [NODES[1], 1, taskIdFor(RUN, 'long_context', 1, 1)],
    ]);
    const spec = (h.at(-1) as Extract<RunEvent, { type: 'StageStarted' }>).data.spec!;
    expect(spec.layout).toMatchObject({ cp: 4, dp: 4 });
    expect(spec.step_tokens).toBe(64 * 65536);
    expect(spec.total_steps).toBe(Math.ceil(2_100_000_000 / (64 * 65536)));
    expect(spec.planned_tokens_per_s).toBe(PLAN.layouts[1]!.tokens_per_s);
    expect(spec.checkpoint.storage).toBe('s3://acme-checkpoints/code-8b-cpt');
  });
});
