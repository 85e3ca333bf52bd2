import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envSchema, loadConfig } from '@ito/config';

const README = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

describe('the storage variables', () => {
  it('are each named in the README configuration list (docs/contract.md is checked against the schema elsewhere)', () => {
    const storage = Object.keys(envSchema.shape).filter((k) => k.startsWith('ITO_S3_') || k.startsWith('ITO_STORAGE_'));
    expect(storage.length).toBeGreaterThanOrEqual(10);
    const configuration = README.slice(README.indexOf('## Configuration'));
    for (const name of storage) expect(configuration, name).toContain(`\`${name}\``);
  });

  it('take S3 credentials as a pair, and never echo a secret when refusing', () => {
    expect(() => loadConfig({ ITO_S3_ACCESS_KEY_ID: 'AKIDEXAMPLEONLY' })).toThrow(/^invalid environment: ITO_S3_SECRET_ACCESS_KEY: .*set together/);
    let refusal = '';
    try {
      loadConfig({ ITO_S3_SECRET_ACCESS_KEY: 'planted-secret-value' });
    } catch (err) {
      refusal = String(err);
    }
    expect(refusal).toMatch(/set together/);
    expect(refusal).not.toContain('planted-secret-value');
    const cfg = loadConfig({ ITO_S3_ENDPOINT: 'http://127.0.0.1:9000', ITO_S3_PATH_STYLE: '1', ITO_STORAGE_SIMULATED_SCHEMES: 's3,gs' });
    expect([cfg.ITO_S3_PATH_STYLE, cfg.ITO_S3_TIMEOUT_MS, cfg.ITO_S3_MAX_ATTEMPTS, cfg.ITO_STORAGE_PROBE_TIMEOUT_MS]).toEqual([true, 30_000, 3, 10_000]);
    expect(() => loadConfig({ ITO_S3_ENDPOINT: 'ftp://store' })).toThrow(/^invalid environment: ITO_S3_ENDPOINT:/);
    expect(() => loadConfig({ ITO_STORAGE_SIMULATED_SCHEMES: 's3,,gs' })).toThrow(/^invalid environment: ITO_STORAGE_SIMULATED_SCHEMES:/);
    expect(() => loadConfig({ ITO_STORAGE_PROBE_TIMEOUT_MS: '999999' })).toThrow(/^invalid environment: ITO_STORAGE_PROBE_TIMEOUT_MS:/);
  });
});
