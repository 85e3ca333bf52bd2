import { describe, expect, it } from 'vitest';
import { planRun } from '@ito/planner';
import { booking, exampleManifest, manifestWith, NOW } from './fixtures.js';

function refused(result: ReturnType<typeof planRun>) {
  if (result.ok) throw new Error(`expected a refusal, got a plan: tp=${result.plan.tp} dp=${result.plan.dp}`);
  return result;
}

describe('planRun refusals', () => {
  it('given a 405B model on 1 × 8 A100, when planned, then plan_refused: the model does not fit', () => {
    const m = manifestWith((x) => (x.model.parameters = '405B'));
    const r = refused(planRun({ manifest: m, booking: booking({ gpu: 'a100', nodes: 1 }), now: NOW }));
    expect(r.code).toBe('plan_refused');
    expect(r.reason).toMatch(/does not fit/);
    expect(r.reason).toMatch(/80 GB/);
  });

  it('given a tiny model on 64 nodes, when planned, then plan_refused: more nodes than data parallelism can use', () => {
    const m = manifestWith((x) => (x.model.parameters = '150M'));
    const r = refused(planRun({ manifest: m, booking: booking({ gpu: 'h100', nodes: 64 }), now: NOW }));
    expect(r.code).toBe('plan_refused');
    expect(r.reason).toMatch(/more nodes than data parallelism can use/);
    expect(r.reason).toMatch(/512 data-parallel replicas/);
  });

  it('given the same tiny model on 1 node, when planned, then it plans fine (the refusal is about the node count)', () => {
    const m = manifestWith((x) => (x.model.parameters = '150M'));
    expect(planRun({ manifest: m, booking: booking({ gpu: 'h100', nodes: 1 }), now: NOW }).ok).toBe(true);
  });

  it('given a 70B model on 4 nodes over ethernet, when planned, then fabric_unsupported', () => {
    const m = manifestWith((x) => (x.model.parameters = '70B'));
    const r = refused(planRun({ manifest: m, booking: booking({ nodes: 4, fabric: 'ethernet' }), now: NOW }));
    expect(r.code).toBe('fabric_unsupported');
    expect(r.reason).toMatch(/ethernet/);
  });

  it('given the 70B model on the same 4 nodes over infiniband, when planned, then it plans', () => {
    const m = manifestWith((x) => (x.model.parameters = '70B'));
    expect(planRun({ manifest: m, booking: booking({ nodes: 4, fabric: 'infiniband' }), now: NOW }).ok).toBe(true);
  });

  it('given a 405B model whose long context needs TP beyond a node, when planned, then plan_refused: tensor parallelism across nodes', () => {
    const m = manifestWith((x) => (x.model.parameters = '405B'));
    const r = refused(planRun({ manifest: m, booking: booking({ gpu: 'h100', nodes: 16, fabric: 'roce' }), now: NOW }));
    expect(r.code).toBe('plan_refused');
    expect(r.reason).toMatch(/tensor parallelism across nodes/);
  });

  it('given a term ending tomorrow, when planned, then capacity_insufficient with hours needed and hours left', () => {
    const r = refused(planRun({ manifest: exampleManifest(), booking: booking({ termEnd: new Date(NOW.getTime() + 86_400_000) }), now: NOW }));
    expect(r.code).toBe('capacity_insufficient');
    expect(r.reason).toMatch(/needs \d+\.\d+ hours/);
    expect(r.reason).toMatch(/24\.00 hours left/);
  });

  it('given a term that has not started, when planned, then hours left count from the term start', () => {
    const start = new Date(NOW.getTime() + 10 * 86_400_000);
    const end = new Date(start.getTime() + 2 * 86_400_000);
    const r = refused(planRun({ manifest: exampleManifest(), booking: booking({ termStart: start, termEnd: end }), now: NOW }));
    expect(r.code).toBe('capacity_insufficient');
    expect(r.reason).toMatch(/48\.00 hours left/);
  });

  it('given an unknown GPU or fabric, when planned, then plan_refused naming it', () => {
    const gpu = refused(planRun({ manifest: exampleManifest(), booking: booking({ gpu: 'tpu-v5' }), now: NOW }));
    expect(gpu.code).toBe('plan_refused');
    expect(gpu.reason).toMatch(/unknown GPU "tpu-v5"/);
    const fabric = refused(planRun({ manifest: exampleManifest(), booking: booking({ fabric: 'carrier-pigeon' }), now: NOW }));
    expect(fabric.code).toBe('plan_refused');
    expect(fabric.reason).toMatch(/unknown fabric "carrier-pigeon"/);
  });

  it('given a malformed booking, when planned, then plan_refused listing each problem', () => {
    const r = refused(planRun({ manifest: exampleManifest(), booking: booking({ nodes: 0, rateUsdPerGpuHour: Number.NaN }), now: NOW }));
    expect(r.code).toBe('plan_refused');
    expect(r.reason).toMatch(/booking\.nodes/);
    expect(r.reason).toMatch(/rateUsdPerGpuHour/);
  });

  it('given the catalog key "constructor", when planned, then it is an unknown GPU, not a prototype property', () => {
    const r = refused(planRun({ manifest: exampleManifest(), booking: booking({ gpu: 'constructor' }), now: NOW }));
    expect(r.reason).toMatch(/unknown GPU/);
  });
});
