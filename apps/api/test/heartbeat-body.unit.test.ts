import { describe, expect, it } from 'vitest';
import { agentHeartbeatBody, agentHeartbeatsBody } from '@ito/contracts';
import { certainHeartbeat, certainHeartbeats } from '../src/agent/heartbeat-body.js';

/**
 * The hand-written check of a heartbeat never accepts a body the schema refuses, and accepts the bodies agents
 * send (answering them unchanged, as the schema would).
 */
const TASK = 'tsk_0123456789abcdef0123456789abcdef';
const gpu = (i: number) => ({ index: i, healthy: true, temperature_c: 41.5, utilization: 0.93, memory_used_gb: 70.1, ecc_errors: 0 });
const valid: unknown[] = [
  { tasks: [], gpus: [] },
  { tasks: [], gpus: Array.from({ length: 8 }, (_, i) => gpu(i)) },
  { gpus: [{ index: 0, healthy: false }], tasks: [{ task_id: TASK, attempt: 1 }] },
  { tasks: [{ task_id: TASK, attempt: 10_000, step: 0 }, { task_id: TASK, attempt: 2, step: Number.MAX_SAFE_INTEGER }], gpus: [gpu(63)] },
  { tasks: [], gpus: [{ index: 0, healthy: true, temperature_c: -50, utilization: 0, memory_used_gb: 10_000 }] },
];

/** Every way a field can be wrong, one at a time, beside the fields that are right. */
const wrong: unknown[] = [
  null,
  [],
  'beat',
  {},
  { tasks: [] },
  { gpus: [] },
  { tasks: [], gpus: [], extra: 1 },
  { tasks: {}, gpus: [] },
  { tasks: [], gpus: {} },
  { tasks: Array.from({ length: 17 }, () => ({ task_id: TASK, attempt: 1 })), gpus: [] },
  { tasks: [], gpus: Array.from({ length: 65 }, () => gpu(0)) },
  { tasks: [null], gpus: [] },
  { tasks: [[]], gpus: [] },
  { tasks: [{ task_id: TASK }], gpus: [] },
  { tasks: [{ attempt: 1 }], gpus: [] },
  { tasks: [{ task_id: TASK.toUpperCase(), attempt: 1 }], gpus: [] },
  { tasks: [{ task_id: `${TASK}0`, attempt: 1 }], gpus: [] },
  { tasks: [{ task_id: 'run_0123456789abcdef0123456789abcdef', attempt: 1 }], gpus: [] },
  { tasks: [{ task_id: TASK, attempt: 0 }], gpus: [] },
  { tasks: [{ task_id: TASK, attempt: 10_001 }], gpus: [] },
  { tasks: [{ task_id: TASK, attempt: 1.5 }], gpus: [] },
  { tasks: [{ task_id: TASK, attempt: '1' }], gpus: [] },
  { tasks: [{ task_id: TASK, attempt: 1, step: -1 }], gpus: [] },
  { tasks: [{ task_id: TASK, attempt: 1, step: 0.5 }], gpus: [] },
  { tasks: [{ task_id: TASK, attempt: 1, step: Number.MAX_SAFE_INTEGER + 2 }], gpus: [] },
  { tasks: [{ task_id: TASK, attempt: 1, step: null }], gpus: [] },
  { tasks: [{ task_id: TASK, attempt: 1, extra: 1 }], gpus: [] },
  { tasks: [], gpus: [null] },
  { tasks: [], gpus: [{ index: 0 }] },
  { tasks: [], gpus: [{ healthy: true }] },
  { tasks: [], gpus: [{ index: -1, healthy: true }] },
  { tasks: [], gpus: [{ index: 64, healthy: true }] },
  { tasks: [], gpus: [{ index: 0.5, healthy: true }] },
  { tasks: [], gpus: [{ index: 0, healthy: 'yes' }] },
  { tasks: [], gpus: [{ index: 0, healthy: true, temperature_c: 200.1 }] },
  { tasks: [], gpus: [{ index: 0, healthy: true, temperature_c: -51 }] },
  { tasks: [], gpus: [{ index: 0, healthy: true, utilization: 1.01 }] },
  { tasks: [], gpus: [{ index: 0, healthy: true, utilization: -0.1 }] },
  { tasks: [], gpus: [{ index: 0, healthy: true, memory_used_gb: 10_001 }] },
  { tasks: [], gpus: [{ index: 0, healthy: true, ecc_errors: 1.5 }] },
  { tasks: [], gpus: [{ index: 0, healthy: true, ecc_errors: -1 }] },
  { tasks: [], gpus: [{ index: 0, healthy: true, temperature_c: Number.NaN }] },
  { tasks: [], gpus: [{ index: 0, healthy: true, utilization: Number.POSITIVE_INFINITY }] },
  { tasks: [], gpus: [{ index: 0, healthy: true, fan: 1 }] },
  { tasks: [], gpus: [{ index: 0, healthy: true, temperature_c: null }] },
  JSON.parse('{"tasks": [], "gpus": [], "__proto__": {"x": 1}}'),
];

describe('the hand-written heartbeat check', () => {
  it.each(valid.map((b) => [JSON.stringify(b), b]))('accepts %s unchanged, as the schema does', (_, body) => {
    expect(agentHeartbeatBody.safeParse(body).success).toBe(true);
    expect(certainHeartbeat(body)).toBe(body);
    expect(agentHeartbeatBody.parse(body)).toEqual(body);
  });

  it.each(wrong.map((b) => [JSON.stringify(b), b]))('leaves %s to the schema, which refuses it', (_, body) => {
    expect(agentHeartbeatBody.safeParse(body).success).toBe(false);
    expect(certainHeartbeat(body)).toBeUndefined();
  });
});

/** A batch: every valid beat above, each with its own credential; every wrong beat, beside a right one. */
const credential = (i: number) => `ito_nc_${String(i).padStart(43, 'A')}`;
const asBeat = (b: unknown, i: number) => (b && typeof b === 'object' && !Array.isArray(b) ? { ...(b as object), credential: credential(i) } : b);
const validBatches: unknown[] = [
  { beats: valid.map(asBeat) },
  { beats: [asBeat(valid[1], 0)] },
  { beats: Array.from({ length: 64 }, (_, i) => asBeat(valid[0], i)) },
];
const wrongBatches: unknown[] = [
  null,
  [],
  {},
  { beats: [] },
  { beats: {} },
  { beats: [asBeat(valid[0], 1)], extra: 1 },
  { beats: Array.from({ length: 65 }, (_, i) => asBeat(valid[0], i)) },
  { beats: [asBeat(valid[0], 1), asBeat(valid[1], 1)] },
  { beats: [valid[0]] },
  { beats: [{ ...(valid[0] as object), credential: 'ito_sk_'.padEnd(50, 'A') }] },
  { beats: [{ ...(valid[0] as object), credential: credential(1).slice(0, -1) }] },
  { beats: [{ ...(valid[0] as object), credential: `${credential(1)}A` }] },
  { beats: [{ ...(valid[0] as object), credential: 7 }] },
  ...wrong.filter((b) => b && typeof b === 'object' && !Array.isArray(b)).map((b) => ({ beats: [asBeat(valid[0], 0), asBeat(b, 1)] })),
];

describe('the hand-written check of a batch of heartbeats', () => {
  it.each(validBatches.map((b, i) => [i, b]))('accepts valid batch %i unchanged, as the schema does', (_, body) => {
    expect(agentHeartbeatsBody.safeParse(body).success).toBe(true);
    expect(certainHeartbeats(body)).toBe(body);
    expect(agentHeartbeatsBody.parse(body)).toEqual(body);
  });

  it.each(wrongBatches.map((b, i) => [i, JSON.stringify(b)?.slice(0, 120), b]))('leaves wrong batch %i (%s) to the schema, which refuses it', (_, _s, body) => {
    expect(agentHeartbeatsBody.safeParse(body).success).toBe(false);
    expect(certainHeartbeats(body)).toBeUndefined();
  });
});
