import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ItoError, parseManifest, type Manifest } from '@ito/contracts';
import { DEFAULT_TENANT_POLICY, checkBookingUsable, checkBudget, checkCheckpointStorage, checkDataPolicy, type Booking } from '@ito/domain';

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

describe('booking gate', () => {
  const now = new Date('2026-12-02T12:00:00Z');
  const booking: Booking = {
    booking_id: 'bkg_1',
    tenant_id: 'ten_1',
    status: 'completed',
    gpu: 'h200',
    nodes: 2,
    gpus_per_node: 8,
    region: 'us-east-1',
    fabric: 'infiniband',
    term_start: new Date('2026-12-01T00:00:00Z'),
    term_end: new Date('2026-12-31T00:00:00Z'),
    rate_usd_per_gpu_hour: 2.5,
    node_inventory: [],
  };
  const gate = (b: Booking | null, tenant = 'ten_1') => code(() => checkBookingUsable(b, tenant, 'bkg_1', now));
  it('a completed booking in term passes', () => expect(gate(booking)).toBeNull());
  it('missing or another tenant', () => {
    expect(gate(null)).toBe('booking_not_found');
    expect(gate(booking, 'ten_2')).toBe('booking_not_found');
  });
  it('each status fails closed with its own code', () => {
    expect(gate({ ...booking, status: 'pending' })).toBe('booking_incomplete');
    expect(gate({ ...booking, status: 'expired' })).toBe('booking_expired');
    expect(gate({ ...booking, status: 'revoked' })).toBe('booking_revoked');
    expect(gate({ ...booking, status: 'released' })).toBe('booking_released');
  });
  it('a term that has ended is expired even if the desk has not said so', () => expect(gate({ ...booking, term_end: now })).toBe('booking_expired'));
  it('a term that has not begun entitles nothing yet; its first instant does', () => {
    expect(gate({ ...booking, term_start: new Date(now.getTime() + 1) })).toBe('booking_not_started');
    expect(gate({ ...booking, term_start: now })).toBeNull();
  });
});
