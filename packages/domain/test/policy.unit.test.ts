import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ItoError, parseManifest, type Manifest } from '@ito/contracts';
import { DEFAULT_TENANT_POLICY, checkBudget, checkCheckpointStorage, checkDataPolicy } from '@ito/domain';

const example = readFileSync(new URL('../../../examples/manifest.json', import.meta.url), 'utf8');
function manifest(): Manifest {
  const r = parseManifest(example);
  if (!r.ok) throw new Error('example must parse');
  return structuredClone(r.manifest);
}
function code(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (err instanceof ItoError) return err.code;
    throw err;
  }
}

describe('tenant policy', () => {
  it('the example passes the default policy', () => {
    expect(code(() => checkDataPolicy(manifest(), DEFAULT_TENANT_POLICY))).toBeNull();
    expect(code(() => checkCheckpointStorage(manifest(), DEFAULT_TENANT_POLICY))).toBeNull();
  });
  it('a licence the tenant does not allow', () => {
    const m = manifest();
    m.data[1]!.license = 'cc-by-nc-4.0';
    expect(code(() => checkDataPolicy(m, DEFAULT_TENANT_POLICY))).toBe('data_policy_violation');
  });
  it('decontamination made against another battery', () => {
    const m = manifest();
    m.data[0]!.decontamination.eval_suite = 'other-evals/v9';
    expect(code(() => checkDataPolicy(m, DEFAULT_TENANT_POLICY))).toBe('data_policy_violation');
  });
  it('contamination over the limit', () => {
    const m = manifest();
    m.data[0]!.decontamination.contaminated_fraction = 0.01;
    expect(code(() => checkDataPolicy(m, DEFAULT_TENANT_POLICY))).toBe('data_policy_violation');
  });
  it('checkpoint storage on a scheme or prefix not allowed', () => {
    const m = manifest();
    m.checkpoint.storage = 'file:///tmp/ckpt/';
    expect(code(() => checkCheckpointStorage(m, DEFAULT_TENANT_POLICY))).toBe('checkpoint_storage_invalid');
    const narrowed = { ...DEFAULT_TENANT_POLICY, checkpoint_storage: { schemes: ['s3'], prefixes: ['s3://other-bucket/'] } };
    expect(code(() => checkCheckpointStorage(manifest(), narrowed))).toBe('checkpoint_storage_invalid');
  });
  it('budget and incremental cost ceilings', () => {
    expect(code(() => checkBudget(manifest(), 60_000.01, 0))).toBe('budget_exceeded');
    expect(code(() => checkBudget(manifest(), 100, 4000.01))).toBe('incremental_cost_exceeded');
    expect(code(() => checkBudget(manifest(), 60_000, 4000))).toBeNull();
  });
});
