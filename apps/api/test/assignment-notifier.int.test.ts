import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASSIGNMENTS_CHANNEL } from '@ito/runs';
import { createAssignmentNotifier, type AssignmentNotifier } from '../src/agent/assignment-notifier.js';
import { usePool } from '../../../test/support/db.js';

// A long poll reads a node's tasks, then waits for a change. A change committed between the read and the wait
// must still wake it: the poll watches before it reads. With `wait` called after the read, such a change was lost
// and the poll slept to its deadline (seen as an agent handed its first task at the end of a 20 s wait).

const db = usePool(3);
let pool: pg.Pool;
let notifier: AssignmentNotifier;

beforeAll(async () => {
  pool = db.pool();
  notifier = createAssignmentNotifier(pool, pino({ level: 'silent' }));
  // Listening once a first notification goes through.
  for (;;) {
    const w = notifier.watch('node_probe', 200);
    await pool.query('select pg_notify($1, $2)', [ASSIGNMENTS_CHANNEL, 'node_probe']);
    const t0 = Date.now();
    await w.changed;
    if (Date.now() - t0 < 150) break;
  }
});
// After hooks run in reverse order of registration: the notifier closes before usePool ends its pool.
afterAll(async () => {
  await notifier?.close();
});

const notify = (nodeId: string) => pool.query('select pg_notify($1, $2)', [ASSIGNMENTS_CHANNEL, nodeId]);

describe('assignment notifier', () => {
  it('a change notified after watch() began and before anyone awaits it still wakes the watcher at once', async () => {
    const w = notifier.watch('node_a', 10_000);
    await notify('node_a'); // the "read" happens here: the change lands before the caller awaits
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    await w.changed;
    expect(Date.now() - t0).toBeLessThan(100);
  });

  it('wakes only the node named, and a cancelled watch neither wakes nor stays registered', async () => {
    const a = notifier.watch('node_b', 1_500);
    const other = notifier.watch('node_c', 10_000);
    other.cancel();
    await notify('node_c');
    const t0 = Date.now();
    await a.changed;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_400);
  });
});
