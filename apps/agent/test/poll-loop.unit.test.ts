import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentApi } from '@ito/client';
import { createLogger } from '@ito/config';
import type { Assignment } from '@ito/contracts';
import { Agent } from '../src/agent.js';
import type { Executor, TaskOutcome } from '../src/executors/executor.js';
import { makeAssignment } from './support/tasks.js';

/**
 * The agent's assignments loop against a stand-in for the API's long poll (held while the node's tasks are the ones
 * the agent names, answered at once otherwise), with a trainer that takes its time to stop once withdrawn.
 */
function standInApi(first: Assignment) {
  let polls = 0;
  let closed = false;
  const api = {
    async register() {
      return { ok: true, data: { node_id: 'node', booking_id: 'bkg', name: 'gpu-01', heartbeat_interval_s: 60, heartbeat_misses: 3, server_time: new Date().toISOString() } };
    },
    async heartbeat() {
      return { ok: true, data: { interval_s: 60, stop: [], directives: [] } };
    },
    async assignments(_waitS: number, known: string[]) {
      polls++;
      // First the task, then it is withdrawn: the API lists nothing, and holds a request that names nothing.
      if (polls === 1) return { ok: true, data: { assignments: [first] } };
      if (known.length === 0) while (!closed) await sleep(20);
      return { ok: true, data: { assignments: [] } };
    },
    async progress() {
      return { ok: true, data: { task_id: first.task_id, duplicate: false, directive: 'continue' } };
    },
    async fail() {
      return { ok: true, data: { task_id: first.task_id, duplicate: false, directive: 'stop' } };
    },
  };
  return { api: api as unknown as AgentApi, polls: () => polls, close: () => (closed = true) };
}

/** A trainer that, told to stop, takes `stopMs` to exit (a rank blocked in a collective, a slow final save). */
function slowToStop(stopMs: number): Executor {
  return {
    kind: 'process',
    start() {
      let end!: (o: TaskOutcome) => void;
      const done = new Promise<TaskOutcome>((r) => (end = r));
      return {
        done,
        stop({ reason }) {
          setTimeout(() => end({ kind: 'stopped', reason, step: 0, elapsed_s: 0 }), stopMs);
        },
      };
    },
  };
}

let stop: (() => Promise<void>) | null = null;
afterEach(async () => {
  await stop?.();
  stop = null;
});

describe('the assignments loop', () => {
  it('holds its next request while a withdrawn task is still stopping, instead of asking again and again', async () => {
    const stand = standInApi(makeAssignment());
    const agent = new Agent({ api: stand.api, executor: slowToStop(1_500), logger: createLogger({ level: 'silent', name: 'test' }), version: 'test', gpus: () => [], retryMs: 50 });
    stop = async () => {
      stand.close();
      await agent.stop();
    };
    await agent.start();
    await sleep(800);
    // One answer with the task, one that withdraws it, then one request held: never a loop while the trainer stops.
    expect(stand.polls()).toBeLessThanOrEqual(3);
  });
});
