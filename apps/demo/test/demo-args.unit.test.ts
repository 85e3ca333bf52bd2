import { describe, expect, it } from 'vitest';
import { parseDemoArgs } from '../src/args.js';
import { FaultPlan } from '../src/fault-plan.js';

describe('npm run demo flags', () => {
  it('defaults to port 8420, or ITO_PORT, and takes --port, --time-scale and --keep-running', () => {
    const plain = parseDemoArgs([], {});
    expect(plain).toMatchObject({ help: false, options: { port: 8420, timeScale: 10000, keepRunning: false } });
    expect(parseDemoArgs([], { ITO_PORT: '9000' })).toMatchObject({ options: { port: 9000 } });
    expect(parseDemoArgs(['--port', '9100', '--time-scale', '200', '--keep-running'], { ITO_PORT: '9000' })).toMatchObject({ options: { port: 9100, timeScale: 200, keepRunning: true } });
    expect(parseDemoArgs(['--help'], {})).toEqual({ help: true });
  });

  it('refuses a bad flag or value without echoing it', () => {
    for (const argv of [['--port', '0'], ['--port', '70000'], ['--time-scale', 'x1'], ['--port'], ['--what=ever-secret']]) {
      const parsed = parseDemoArgs(argv, {});
      expect(parsed, argv.join(' ')).toHaveProperty('error');
      expect(JSON.stringify(parsed)).not.toContain('ever-secret');
      expect(JSON.stringify(parsed)).not.toContain('70000');
    }
    expect(parseDemoArgs([], { ITO_PORT: 'eighty' })).toEqual({ help: false, error: 'ITO_PORT must be a port number' });
  });
});

describe('when the demo pulls a node', () => {
  const training = (stage: string) => ({ run_id: 'run_1', state: 'training', stage });

  it('waits for three checkpoints of pretrain, then fires exactly once', () => {
    const plan = new FaultPlan(3);
    expect(plan.shouldPull({ run_id: 'run_1', state: 'planning', stage: 'planning' }, 0)).toBe(false);
    // Checkpoints saved before pretrain was first seen do not count.
    expect(plan.shouldPull(training('pretrain'), 2)).toBe(false);
    expect(plan.shouldPull(training('pretrain'), 4)).toBe(false);
    expect(plan.shouldPull(training('pretrain'), 5)).toBe(true);
    expect(plan.shouldPull(training('pretrain'), 9)).toBe(false);
  });

  it('never fires outside pretrain training', () => {
    const plan = new FaultPlan(1);
    expect(plan.shouldPull(training('mid_train'), 10)).toBe(false);
    expect(plan.shouldPull({ run_id: 'run_1', state: 'recovering', stage: 'pretrain' }, 10)).toBe(false);
  });
});
