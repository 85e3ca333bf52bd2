import { describe, expect, it } from 'vitest';
import { FaultPlan, FaultSpecError, parseSimFaults } from '../src/executors/faults.js';
import { refusalMessage } from './support/refusal.js';

const refusal = (text: string) => refusalMessage(() => parseSimFaults(text), FaultSpecError);

describe('ITO_SIM_FAULTS parser', () => {
  it("parses the contract's examples", () => {
    expect(parseSimFaults('crash@step=400')).toEqual([{ kind: 'crash', step: 400, stage: null, factor: null }]);
    expect(parseSimFaults('hang@step=100')).toEqual([{ kind: 'hang', step: 100, stage: null, factor: null }]);
    expect(parseSimFaults('loss_spike@step=300')).toEqual([{ kind: 'loss_spike', step: 300, stage: null, factor: 4 }]);
  });

  it('parses every kind, with stage and factor, several faults separated by ;', () => {
    expect(parseSimFaults(' slow_checkpoint@step=50,stage=mid_train ; slow@step=0,factor=3.5;loss_spike@factor=8,step=10,stage=sft ')).toEqual([
      { kind: 'slow_checkpoint', step: 50, stage: 'mid_train', factor: 20 },
      { kind: 'slow', step: 0, stage: null, factor: 3.5 },
      { kind: 'loss_spike', step: 10, stage: 'sft', factor: 8 },
    ]);
    expect(parseSimFaults('crash@step=0,stage=eval_pretrain')).toEqual([{ kind: 'crash', step: 0, stage: 'eval_pretrain', factor: null }]);
    expect(parseSimFaults('')).toEqual([]);
    expect(parseSimFaults(undefined)).toEqual([]);
  });

  it('refuses anything off the grammar, naming the entry and at most its kind', () => {
    expect(refusal('explode@step=1')).toBe('ITO_SIM_FAULTS entry 1: unknown kind (expected crash, hang, loss_spike, slow_checkpoint, slow, proxy_loss)');
    expect(refusal('crash@step=1;;hang@step=2')).toMatch(/^ITO_SIM_FAULTS entry 2: is empty/);
    expect(refusal('crash')).toBe('ITO_SIM_FAULTS entry 1 (crash): expected <kind>@step=<n>');
    expect(refusal('crash@stage=pretrain')).toBe('ITO_SIM_FAULTS entry 1 (crash): step=<n> is required');
    expect(refusal('crash@step=-1')).toBe('ITO_SIM_FAULTS entry 1 (crash): step must be a whole number');
    expect(refusal('crash@step=1e3')).toBe('ITO_SIM_FAULTS entry 1 (crash): step must be a whole number');
    expect(refusal('crash@step=1,step=2')).toBe('ITO_SIM_FAULTS entry 1 (crash): step is given twice');
    expect(refusal('crash@step=1,factor=2')).toBe('ITO_SIM_FAULTS entry 1 (crash): takes no factor');
    expect(refusal('hang@step=1,stage=data_prep')).toBe('ITO_SIM_FAULTS entry 1 (hang): stage must name a training, post-training or evaluation stage');
    expect(refusal('slow@step=1,factor=0')).toMatch(/^ITO_SIM_FAULTS entry 1 \(slow\): factor must be a number above 0/);
    expect(refusal('slow@step=1,factor=Infinity')).toMatch(/factor must be a number/);
    expect(refusal('slow@step=1,speed=2')).toBe('ITO_SIM_FAULTS entry 1 (slow): parameters are step, stage, factor, rank and attempt, as key=value');
    expect(refusal('hang@step=1,rank=-1')).toBe('ITO_SIM_FAULTS entry 1 (hang): rank must be a whole number');
    expect(refusal('hang@step=1,attempt=0')).toBe('ITO_SIM_FAULTS entry 1 (hang): attempt must be a whole number from 1');
    expect(refusal('hang@step=1,rank=1,rank=2')).toBe('ITO_SIM_FAULTS entry 1 (hang): rank is given twice');
    expect(refusal('slow@step')).toBe('ITO_SIM_FAULTS entry 1 (slow): step has no value');
    expect(refusal('crash@step=1 ,stage=pretrain')).toBe('ITO_SIM_FAULTS entry 1 (crash): step must be a whole number');
    expect(refusal('x'.repeat(5000))).toBe('ITO_SIM_FAULTS is longer than 4096 characters');
    expect(refusal(Array(65).fill('crash@step=1').join(';'))).toBe('ITO_SIM_FAULTS has more than 64 faults');
  });

  it('never echoes the text of a bad entry', () => {
    const secretish = 'hunter2-token-abc';
    for (const text of [`${secretish}@step=1`, `crash@step=${secretish}`, `crash@step=1,stage=${secretish}`, `slow@step=1,factor=${secretish}`, `crash@${secretish}=1`]) {
      expect(refusal(text)).not.toContain('hunter2');
    }
  });
});

describe('fault plan', () => {
  const train = { stage: 'pretrain', kind: 'train' } as const;
  const evalTask = { stage: 'eval_pretrain', kind: 'eval' } as const;

  it('fires each fault once, at the first boundary at or after its step, for the stage it names', () => {
    const plan = new FaultPlan(parseSimFaults('crash@step=10;crash@step=5,stage=mid_train;hang@step=0,stage=eval_pretrain'));
    expect(plan.take('crash', train, 9)).toEqual([]);
    expect(plan.take('crash', train, 12)).toHaveLength(1);
    expect(plan.take('crash', train, 13)).toEqual([]);
    expect(plan.take('crash', { stage: 'mid_train', kind: 'train' }, 5)).toHaveLength(1);
    // A fault without a stage never meets an evaluation task; one that names it does.
    expect(new FaultPlan(parseSimFaults('crash@step=0')).take('crash', evalTask, 0)).toEqual([]);
    expect(plan.take('hang', evalTask, 0)).toHaveLength(1);
    expect(plan.take('hang', evalTask, 0)).toEqual([]);
  });

  it('meets only the rank and the attempt it names, when it names them', () => {
    expect(parseSimFaults('hang@step=7,stage=pretrain,rank=1,attempt=1')).toEqual([{ kind: 'hang', step: 7, stage: 'pretrain', factor: null, rank: 1, attempt: 1 }]);
    const plan = new FaultPlan(parseSimFaults('hang@step=7,stage=pretrain,rank=1,attempt=1'));
    expect(plan.take('hang', { ...train, rank: 0, attempt: 1 }, 8)).toEqual([]);
    expect(plan.take('hang', { ...train, rank: 1, attempt: 2 }, 8)).toEqual([]);
    expect(plan.take('hang', { ...train, rank: 1, attempt: 1 }, 8)).toHaveLength(1);
    expect(plan.take('hang', { ...train, rank: 1, attempt: 1 }, 9)).toEqual([]);
  });
});
