import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createLogger } from '@ito/config';
import { freshDatabase } from '../../../test/support/db.js';
import type { ScratchDatabase } from '../../../test/support/scratch-db.js';
import { closePool, createPool } from '../src/database.js';

let db: ScratchDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => db.drop());

describe('the server database pool', () => {
  it('survives a checked-out connection ended between two queries (a database restart): the error is the query’s, not the process’s', async () => {
    const pool = createPool(db.url, createLogger({ level: 'silent', name: 'test' }));
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      const client = await pool.connect();
      await client.query('begin');
      const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      // As a fast shutdown does: the server ends the backend while the client holds it idle in a transaction.
      await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
      // Wait until the client has seen its connection end (an unhandled 'error' would fail this test file).
      for (const deadline = Date.now() + 5_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
        if (!(client as unknown as { _queryable: boolean })._queryable) break;
      }
      await expect(client.query('select 1')).rejects.toThrow();
      client.release(true);
      // The pool goes on with a fresh connection.
      expect((await pool.query<{ one: number }>('select 1 as one')).rows[0]!.one).toBe(1);
    } finally {
      await admin.end();
      await closePool(pool);
    }
  });
});
