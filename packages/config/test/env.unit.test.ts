import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@ito/config';

describe('environment configuration', () => {
  it('applies the defaults of the contract', () => {
    const c = loadConfig({ HOME: '/home/u' });
    expect(c.ITO_PORT).toBe(8420);
    expect(c.ITO_HOST).toBe('127.0.0.1');
    expect(c.ITO_API_URL).toBe('http://127.0.0.1:8420');
    expect(c.ITO_HEARTBEAT_INTERVAL_S).toBe(2);
    expect(c.ITO_HANG_STEP_FACTOR).toBe(5);
    expect(c.ITO_HEARTBEAT_MISSES).toBe(3);
    expect(c.ITO_TOKEN_FILE).toBe(`${c.ITO_HOME}/cli/credentials.json`);
  });

  it('fails on the first bad variable, naming it and never echoing its value', () => {
    const attempt = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (err) {
        return err as ConfigError;
      }
      throw new Error('expected a ConfigError');
    };
    expect(attempt({ ITO_PORT: 'abc' }).variable).toBe('ITO_PORT');
    const bad = attempt({ ITO_DATABASE_URL: 'mysql://user:hunter2@db/x' });
    expect(bad.variable).toBe('ITO_DATABASE_URL');
    expect(bad.message).not.toContain('hunter2');
    expect(attempt({ ITO_LOG_LEVEL: 'loud' }).message).toMatch(/^invalid environment: ITO_LOG_LEVEL:/);
  });

  it('reads the SLO targets: 10 s and 60 s by default, positive and within the seed`s 600 s and 900 s', () => {
    const d = loadConfig({});
    expect([d.ITO_SLO_DETECTION_TARGET_S, d.ITO_SLO_RESUME_TARGET_S]).toEqual([10, 60]);
    const c = loadConfig({ ITO_SLO_DETECTION_TARGET_S: '600', ITO_SLO_RESUME_TARGET_S: '0.5' });
    expect([c.ITO_SLO_DETECTION_TARGET_S, c.ITO_SLO_RESUME_TARGET_S]).toEqual([600, 0.5]);
    for (const [variable, value] of [
      ['ITO_SLO_DETECTION_TARGET_S', '600.5'],
      ['ITO_SLO_DETECTION_TARGET_S', '0'],
      ['ITO_SLO_RESUME_TARGET_S', '901'],
      ['ITO_SLO_RESUME_TARGET_S', 'soon'],
    ] as const) {
      expect(() => loadConfig({ [variable]: value }), `${variable}=${value}`).toThrow(new RegExp(`^invalid environment: ${variable}:`));
    }
  });

  it('reads the job lock: 30 s by default, from 1 to 600 s', () => {
    expect(loadConfig({}).ITO_JOB_LOCK_S).toBe(30);
    expect(loadConfig({ ITO_JOB_LOCK_S: '1' }).ITO_JOB_LOCK_S).toBe(1);
    expect(loadConfig({ ITO_JOB_LOCK_S: '600' }).ITO_JOB_LOCK_S).toBe(600);
    for (const value of ['0.5', '601', 'long']) expect(() => loadConfig({ ITO_JOB_LOCK_S: value }), value).toThrow(/^invalid environment: ITO_JOB_LOCK_S:/);
  });

  it('reads the start-up allowance bound: 300 s by default, positive and at most a day', () => {
    expect(loadConfig({}).ITO_FIRST_STEP_MAX_S).toBe(300);
    expect(loadConfig({ ITO_FIRST_STEP_MAX_S: '4' }).ITO_FIRST_STEP_MAX_S).toBe(4);
    expect(loadConfig({ ITO_FIRST_STEP_MAX_S: '86400' }).ITO_FIRST_STEP_MAX_S).toBe(86_400);
    for (const value of ['0', '-5', '86401', 'soon']) expect(() => loadConfig({ ITO_FIRST_STEP_MAX_S: value }), value).toThrow(/^invalid environment: ITO_FIRST_STEP_MAX_S:/);
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ ITO_PORT: '' }).ITO_PORT).toBe(8420);
  });

  it('reads the queue topology: a cluster flag and a prefix, refusing anything else', () => {
    expect(loadConfig({}).ITO_REDIS_CLUSTER).toBe(false);
    expect(loadConfig({}).ITO_QUEUE_PREFIX).toBe('ito');
    expect(loadConfig({ ITO_REDIS_CLUSTER: '1' }).ITO_REDIS_CLUSTER).toBe(true);
    expect(loadConfig({ ITO_REDIS_CLUSTER: 'true' }).ITO_REDIS_CLUSTER).toBe(true);
    expect(loadConfig({ ITO_REDIS_CLUSTER: '0' }).ITO_REDIS_CLUSTER).toBe(false);
    expect(() => loadConfig({ ITO_REDIS_CLUSTER: 'yes' })).toThrow(/^invalid environment: ITO_REDIS_CLUSTER:/);
    expect(loadConfig({ ITO_QUEUE_PREFIX: 'ito_e2e_1' }).ITO_QUEUE_PREFIX).toBe('ito_e2e_1');
    for (const bad of ['Ito', '{ito}', '1ito', 'ito:x', 'a'.repeat(42)]) {
      expect(() => loadConfig({ ITO_QUEUE_PREFIX: bad }), bad).toThrow(/^invalid environment: ITO_QUEUE_PREFIX:/);
    }
  });
});
