import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLivenessWriter, type Beat } from '../src/agent/liveness-writer.js';
import { usePool } from '../../../test/support/db.js';

const db = usePool(4);
let pool: pg.Pool;
beforeAll(() => {
  pool = db.pool();
});

const node = (i: number) => `node_${i.toString(16).padStart(32, '0')}`;
const beat = (i: number, at: Date, task: Beat['task'] = null): Beat => ({ node_id: node(i), tenant_id: 'ten_x', at, health: [{ index: 0, healthy: true }], task });

/** The pool, with each statement's start and commit reported: what the writer's batching is judged by. */
function watched(pool: pg.Pool, on: { start?: () => void; commit?: () => void }): pg.Pool {
  return new Proxy(pool, {
    get: (target, prop) =>
      prop === 'query'
        ? (...args: unknown[]) => {
            on.start?.();
            const p = (target.query as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            void p.then(() => on.commit?.());
            return p;
          }
        : Reflect.get(target, prop),
  }) as pg.Pool;
}

describe('heartbeat liveness', () => {
  it('lives in an UNLOGGED table and writes a burst of beats in a few statements, newest per node', async () => {
    const { rows } = await pool.query<{ relpersistence: string }>(`select relpersistence from pg_class where relname = 'node_liveness'`);
    expect(rows[0]?.relpersistence).toBe('u');

    let statements = 0;
    const counting = watched(pool, { start: () => statements++ });
    const writer = createLivenessWriter(counting);
    const t0 = new Date('2026-12-03T10:00:00.000Z');
    await Promise.all(Array.from({ length: 500 }, (_, i) => writer.record(beat(i, new Date(t0.getTime() + i)))));
    expect(statements).toBeLessThan(10);
    const count = await pool.query<{ n: string }>('select count(*) as n from node_liveness');
    expect(Number(count.rows[0]!.n)).toBe(500);
    await writer.close();
  });

  it('starts statements at least the gap apart: beats that come within it share one statement, each answered once it committed', async () => {
    const starts: number[] = [];
    let committed = 0;
    const timed = watched(pool, { start: () => starts.push(performance.now()), commit: () => committed++ });
    const writer = createLivenessWriter(timed, { minGapMs: 300, fullBatch: 1_000 });
    const t0 = new Date('2026-12-03T13:00:00.000Z');
    // Nothing written lately: the first beat's statement starts at once.
    await writer.record(beat(1000, t0));
    expect(starts).toHaveLength(1);
    // Twenty beats over ~100 ms, well within the gap: they wait for it together, and none is answered early.
    const answeredAfter: number[] = [];
    const held: Array<Promise<void>> = [];
    for (let i = 1; i <= 20; i++) {
      held.push(writer.record(beat(1000 + i, t0)).then(() => void answeredAfter.push(committed)));
      await new Promise((r) => setTimeout(r, 5));
    }
    await Promise.all(held);
    expect(starts).toHaveLength(2);
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(295);
    expect(answeredAfter).toEqual(Array.from({ length: 20 }, () => 2));
    const { rows } = await pool.query<{ n: string }>(`select count(*) as n from node_liveness where node_id = any($1::text[])`, [Array.from({ length: 21 }, (_, i) => node(1000 + i))]);
    expect(Number(rows[0]!.n)).toBe(21);

    // A beat still held by the gap when the writer closes is written before close() returns.
    void writer.record(beat(1030, t0));
    await writer.close();
    expect((await pool.query('select 1 from node_liveness where node_id = $1', [node(1030)])).rowCount).toBe(1);
  });

  it('does not hold a full batch for the gap: enough beats waiting start the next statement at once', async () => {
    const starts: number[] = [];
    const timed = watched(pool, { start: () => starts.push(performance.now()) });
    const writer = createLivenessWriter(timed, { minGapMs: 5_000, fullBatch: 50 });
    const t0 = new Date('2026-12-03T15:00:00.000Z');
    await writer.record(beat(3000, t0));
    // Ten beats wait for the gap; fifty more make a full batch, which ends the wait for all sixty.
    const few = writer.recordAll(Array.from({ length: 10 }, (_, i) => beat(3001 + i, t0)));
    await new Promise((r) => setTimeout(r, 20));
    const enough = writer.recordAll(Array.from({ length: 50 }, (_, i) => beat(3011 + i, t0)));
    await Promise.all([few, enough]);
    expect(starts).toHaveLength(2);
    expect(starts[1]! - starts[0]!).toBeLessThan(2_000);
    // Sixty beats recorded at once within the gap are a full batch too: written without waiting.
    await writer.recordAll(Array.from({ length: 60 }, (_, i) => beat(3100 + i, t0)));
    expect(starts).toHaveLength(3);
    expect(performance.now() - starts[0]!).toBeLessThan(4_000);
    await writer.close();
  });

  it('writes the next beats in a second statement while a slow one is in flight, never a beat of a node the first one carries', async () => {
    // Each statement's nodes, as sent; the first statement is held 300 ms before it runs (PostgreSQL answering late).
    const carried: string[][] = [];
    let inFlight = 0;
    let most = 0;
    const slow = new Proxy(pool, {
      get: (target, prop) =>
        prop === 'query'
          ? async (q: { values: unknown[] }) => {
              carried.push(String(q.values[0]).split('\u0001'));
              most = Math.max(most, ++inFlight);
              try {
                if (carried.length === 1) await new Promise((r) => setTimeout(r, 300));
                return await target.query(q);
              } finally {
                inFlight--;
              }
            }
          : Reflect.get(target, prop),
    }) as pg.Pool;
    const writer = createLivenessWriter(slow, { minGapMs: 20, fullBatch: 1_000 });
    const t0 = new Date('2026-12-03T16:00:00.000Z');
    const t1 = new Date(t0.getTime() + 2_000);
    let firstWritten = false;
    const first = writer.recordAll([beat(4000, t0), beat(4001, t0)]).then(() => void (firstWritten = true));
    await new Promise((r) => setTimeout(r, 50));
    // Node 4000 beats again while its first beat's statement is in flight: that beat waits for it; 4002's does not.
    const newer = writer.record(beat(4000, t1));
    await writer.record(beat(4002, t1));
    expect(firstWritten).toBe(false);
    expect(most).toBe(2);
    expect(carried.slice(0, 2)).toEqual([[node(4000), node(4001)], [node(4002)]]);
    await Promise.all([first, newer]);
    expect(carried[2]).toEqual([node(4000)]);
    const { rows } = await pool.query<{ at: Date }>('select last_heartbeat_at as at from node_liveness where node_id = $1', [node(4000)]);
    expect(rows[0]?.at.toISOString()).toBe(t1.toISOString());
    await writer.close();
  });

  it('settles a batch of beats together once the last of them is written, even across statements, and rejects it on a failed write', async () => {
    let committed = 0;
    const counting = watched(pool, { commit: () => committed++ });
    const writer = createLivenessWriter(counting, { minGapMs: 0, fullBatch: 1 });
    const t0 = new Date('2026-12-03T14:00:00.000Z');
    // 2,500 beats: more than one statement carries (2,000), so the batch is written by two.
    const beats = Array.from({ length: 2_500 }, (_, i) => beat(5_000 + i, t0));
    await writer.recordAll(beats).then(() => expect(committed).toBe(2));
    const { rows } = await pool.query<{ n: string }>(`select count(*) as n from node_liveness where node_id = any($1::text[])`, [beats.map((b) => b.node_id)]);
    expect(Number(rows[0]!.n)).toBe(2_500);
    await writer.close();

    const failing = createLivenessWriter({ query: () => Promise.reject(new Error('connection lost')) } as unknown as pg.Pool, { minGapMs: 0, fullBatch: 1 });
    await expect(failing.recordAll([beat(9_000, t0), beat(9_001, t0)])).rejects.toThrow('connection lost');
    await failing.close();
    const left = await pool.query('select 1 from node_liveness where node_id = any($1::text[])', [[node(9_000), node(9_001)]]);
    expect(left.rowCount).toBe(0);
  });

  it('moves progress_at only when the step moves, learns seconds per step, and starts over for a new attempt', async () => {
    const writer = createLivenessWriter(pool);
    const at = (s: number) => new Date(Date.UTC(2026, 11, 3, 11, 0, s));
    const task = (step: number, attempt = 1) => ({ task_id: 'tsk_a', attempt, step });
    await writer.record(beat(900, at(0), task(10)));
    await writer.record(beat(900, at(2), task(14)));
    await writer.record(beat(900, at(4), task(14)));
    let row = (await pool.query('select step, progress_at, step_s, last_heartbeat_at from node_liveness where node_id = $1', [node(900)])).rows[0];
    expect(row.step).toBe(14);
    expect(row.progress_at.toISOString()).toBe(at(2).toISOString());
    expect(row.last_heartbeat_at.toISOString()).toBe(at(4).toISOString());
    expect(row.step_s).toBeCloseTo(0.5, 5);

    // An older beat arriving late never moves liveness back.
    await writer.record(beat(900, at(1), task(12)));
    row = (await pool.query('select step, last_heartbeat_at from node_liveness where node_id = $1', [node(900)])).rows[0];
    expect(row.step).toBe(14);
    expect(row.last_heartbeat_at.toISOString()).toBe(at(4).toISOString());

    await writer.record(beat(900, at(6), task(3, 2)));
    row = (await pool.query('select step, progress_at, step_s from node_liveness where node_id = $1', [node(900)])).rows[0];
    expect(row).toMatchObject({ step: 3, step_s: null });
    expect(row.progress_at.toISOString()).toBe(at(6).toISOString());
    await writer.close();
  });

  it('judges no hang on a task whose trainer reports no step; an ended trainer keeps the mark that it reached a step', async () => {
    const writer = createLivenessWriter(pool);
    const at = (s: number) => new Date(Date.UTC(2026, 11, 3, 12, 0, s));
    const read = async () => (await pool.query('select step, progress_at, last_heartbeat_at from node_liveness where node_id = $1', [node(901)])).rows[0];
    await writer.record(beat(901, at(0), { task_id: 'tsk_b', attempt: 1, step: 7 }));
    // The trainer ended (its last reports are on their way): the beat names the task without a step. No step to
    // judge a hang on, but progress_at stays: the attempt reached a step, so its start-up allowance is over.
    await writer.record(beat(901, at(2), { task_id: 'tsk_b', attempt: 1, step: null }));
    let row = await read();
    expect(row.step).toBeNull();
    expect(row.progress_at.toISOString()).toBe(at(0).toISOString());
    // A late older beat changes nothing of that.
    await writer.record(beat(901, at(1), { task_id: 'tsk_b', attempt: 1, step: 7 }));
    row = await read();
    expect(row.step).toBeNull();
    expect(row.progress_at.toISOString()).toBe(at(0).toISOString());
    // The next task, before its first step, has neither; its first reported step starts its progress clock.
    await writer.record(beat(901, at(4), { task_id: 'tsk_c', attempt: 1, step: null }));
    expect(await read()).toMatchObject({ step: null, progress_at: null });
    await writer.record(beat(901, at(6), { task_id: 'tsk_c', attempt: 1, step: 0 }));
    row = await read();
    expect(row.step).toBe(0);
    expect(row.progress_at.toISOString()).toBe(at(6).toISOString());
    await writer.close();
  });
});
