import { describe, expect, it } from 'vitest';
import { pipelineJobs } from '@ito/worker';
import { PIPELINE_SLOTS_PER_TENANT, WORKER_REGISTRATIONS } from '../src/workers/registry.js';

describe('the worker role`s pipeline workers share their slots between tenants', () => {
  it('run with a per-tenant share below their concurrency, and every pipeline job counts against its tenant', () => {
    const pipeline = WORKER_REGISTRATIONS.find((r) => r.name === 'pipeline')!;
    expect(pipeline.fairShare).toEqual({ maxActivePerKey: PIPELINE_SLOTS_PER_TENANT });
    // Slots a tenant's backlog can never take (the kept-free default is the share): there for another tenant at once.
    expect(pipeline.concurrency! - PIPELINE_SLOTS_PER_TENANT).toBeGreaterThanOrEqual(PIPELINE_SLOTS_PER_TENANT);
    const tenant = `ten_${'a'.repeat(32)}`;
    for (const [name, def] of Object.entries(pipelineJobs)) {
      expect(def.fairShareKey, name).toBeTypeOf('function');
      expect(def.fairShareKey!({ tenant_id: tenant } as never), name).toBe(tenant);
    }
  });
});
