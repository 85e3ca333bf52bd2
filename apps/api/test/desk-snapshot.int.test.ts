import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withSnapshotReads } from '../src/services/desk-snapshot.js';
import { freshDatabase } from '../../../test/support/db.js';
import type { ScratchDatabase } from '../../../test/support/scratch-db.js';

/** The desk's reads run side by side on several connections; they must all read the one state of the database. */
describe('desk snapshot reads', () => {
  let db: ScratchDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    db = await freshDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 8 });
    await pool.query('create table snapshot_probe (x int)');
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  /** Nothing left behind: every connection back in the pool, none idle in a transaction. */
  async function assertNothingHeld() {
    expect(pool.idleCount).toBe(pool.totalCount);
    const { rows } = await pool.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`);
    expect(rows[0].n).toBe(0);
  }

  it('reads on several connections at once, every one as of the same snapshot, though a write commits in between', async () => {
    await pool.query('insert into snapshot_probe values (1)');
    const seen = await withSnapshotReads(pool, 3, async (reads) => {
      const before = await reads.query<{ n: number }>('select count(*)::int as n from snapshot_probe');
      // Committed after the snapshot was taken, before the other connections have read anything of their own.
      await pool.query('insert into snapshot_probe values (2)');
      const at = await Promise.all([1, 2, 3].map(() => reads.query<{ n: number; pid: number }>('select count(*)::int as n, pg_backend_pid() as pid from snapshot_probe')));
      return { before: before.rows[0]!.n, after: at.map((r) => r.rows[0]!.n), pids: new Set(at.map((r) => r.rows[0]!.pid)).size };
    });
    expect(seen).toEqual({ before: 1, after: [1, 1, 1], pids: 3 });
    expect((await pool.query('select count(*)::int as n from snapshot_probe')).rows[0].n).toBe(2);
    await assertNothingHeld();
  });

  it('a failing read fails the whole and leaves no connection in its transaction', async () => {
    await expect(
      withSnapshotReads(pool, 3, async (reads) => {
        await Promise.all([reads.query('select pg_sleep(0.05)'), reads.query('select * from no_such_table')]);
      }),
    ).rejects.toThrow(/no_such_table/);
    await assertNothingHeld();
  });
});
