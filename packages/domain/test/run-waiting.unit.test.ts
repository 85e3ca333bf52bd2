import { describe, expect, it } from 'vitest';
import { waitingReasons } from '../src/index.js';

describe('waitingReasons', () => {
  it('before the first stage on nodes, any shortfall of live nodes is a wait', () => {
    for (const state of ['reserved', 'confirmed', 'preparing_data', 'planning'] as const) {
      expect(waitingReasons({ state, nodes: { live: 1, needed: 2 } })).toEqual([{ reason: 'nodes', live: 1, needed: 2, message: 'waiting for nodes: 1 of 2 live' }]);
      expect(waitingReasons({ state, nodes: { live: 2, needed: 2 } })).toEqual([]);
      expect(waitingReasons({ state, nodes: { live: 3, needed: 2 } })).toEqual([]);
    }
  });

  it('on nodes, a run goes on with fewer after a loss: only none at all is a wait', () => {
    for (const state of ['training', 'recovering', 'evaluating', 'post_training'] as const) {
      expect(waitingReasons({ state, nodes: { live: 1, needed: 2 } })).toEqual([]);
      expect(waitingReasons({ state, nodes: { live: 0, needed: 2 } })[0]?.message).toBe('waiting for nodes: 0 of 2 live');
    }
  });

  it('an ended run, or one with no booking facts, waits for nothing', () => {
    for (const state of ['succeeded', 'failed', 'cancelled', 'gate_failed', 'cleaned', 'awaiting_operator'] as const) {
      expect(waitingReasons({ state, nodes: { live: 0, needed: 2 } })).toEqual([]);
    }
    expect(waitingReasons({ state: 'planning', nodes: null })).toEqual([]);
  });

  it("a first step within its start-up allowance is one more member, after the nodes, only while work is on nodes", () => {
    const first_step = 'first step on node gpu-01 (allowance 300 s, 12 s so far)';
    expect(waitingReasons({ state: 'post_training', nodes: { live: 1, needed: 1 }, first_step })).toEqual([
      { reason: 'first_step', waiting_for: first_step, message: `waiting for ${first_step}` },
    ]);
    expect(waitingReasons({ state: 'training', nodes: { live: 0, needed: 2 }, first_step }).map((w) => w.reason)).toEqual(['nodes', 'first_step']);
    expect(waitingReasons({ state: 'training', nodes: { live: 2, needed: 2 }, first_step: null })).toEqual([]);
    for (const state of ['planning', 'succeeded', 'failed'] as const) expect(waitingReasons({ state, nodes: null, first_step })).toEqual([]);
  });
});
