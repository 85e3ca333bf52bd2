import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseManifest, type Manifest } from '@ito/contracts';
import { DEFAULT_TENANT_POLICY, FORESEEN_GATES, foreseePlanGates } from '../src/index.js';

const text = readFileSync(new URL('../../../examples/manifest.json', import.meta.url), 'utf8');
const example = (): Manifest => {
  const r = parseManifest(text);
  if (!r.ok) throw new Error('the example must parse');
  return structuredClone(r.manifest);
};
const planned = { ok: true as const, estimated_cost_usd: 3206.8, incremental_cost_usd: 10.93, estimated_hours: 80.2 };
const statuses = (findings: ReturnType<typeof foreseePlanGates>) => Object.fromEntries(findings.map((f) => [f.gate, f.status === 'refused' ? f.code : f.status]));

describe('foreseePlanGates', () => {
  it('given a plan within every bound, then every gate passes, in the listed order', () => {
    const findings = foreseePlanGates(example(), DEFAULT_TENANT_POLICY, planned);
    expect(findings.map((f) => f.gate)).toEqual([...FORESEEN_GATES]);
    expect(findings.every((f) => f.status === 'passed')).toBe(true);
  });

  it('given an estimate over the ceiling and an incremental cost over its cap, then each is its own finding', () => {
    const m = example();
    m.budget.ceiling_usd = 3000;
    m.budget.max_incremental_cost_usd = 10;
    expect(statuses(foreseePlanGates(m, DEFAULT_TENANT_POLICY, planned))).toMatchObject({ ceiling: 'budget_exceeded', 'incremental cost': 'incremental_cost_exceeded', 'storage policy': 'passed' });
  });

  it('given policies the manifest breaks, then storage and data policy refuse with their codes', () => {
    const policy = { ...DEFAULT_TENANT_POLICY, allowed_licenses: ['mit'], checkpoint_storage: { schemes: ['gs'], prefixes: [] } };
    expect(statuses(foreseePlanGates(example(), policy, planned))).toMatchObject({ 'storage policy': 'checkpoint_storage_invalid', 'data policy': 'data_policy_violation' });
  });

  it("given the planner's term refusal, then the term refuses and the costs are not checked; any other refusal is the capacity's", () => {
    const term = statuses(foreseePlanGates(example(), DEFAULT_TENANT_POLICY, { ok: false, code: 'capacity_insufficient', reason: 'term too short' }));
    expect(term).toEqual({ capacity: 'passed', term: 'capacity_insufficient', ceiling: 'not_checked', 'incremental cost': 'not_checked', 'storage policy': 'passed', 'data policy': 'passed' });
    const memory = statuses(foreseePlanGates(example(), DEFAULT_TENANT_POLICY, { ok: false, code: 'plan_refused', reason: 'does not fit' }));
    expect(memory).toMatchObject({ capacity: 'plan_refused', term: 'not_checked' });
  });
});
