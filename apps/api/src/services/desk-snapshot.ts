import type pg from 'pg';

/** What the desk's reads need of a connection: plain queries (a pg.Pool is one, withSnapshotReads' connections another). */
export interface DeskReads {
  query<R extends pg.QueryResultRow = any>(text: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
}

/**
 * A few connections reading one snapshot of the database: the first opens a read-only REPEATABLE READ
 * transaction and exports its snapshot, the others import it, and each query goes to the connection with the
 * fewest in flight. So the desk's reads run side by side (node-pg sends one query at a time per connection) and
 * yet cannot mix two states of the projection: a catch-up or fold committing between them is seen by none.
 * One REPEATABLE READ transaction on one connection would run them one after another; reads straight off the
 * pool, each in its own snapshot, could sum one state's day sums with another's bookings or histograms.
 */
export async function withSnapshotReads<T>(pool: pg.Pool, connections: number, read: (reads: DeskReads) => Promise<T>): Promise<T> {
  const clients: pg.PoolClient[] = [];
  const opened: pg.PoolClient[] = [];
  const inFlight = new Map<pg.PoolClient, number>();
  const pending = new Set<Promise<unknown>>();
  let failed: Error | undefined;
  try {
    const connected = await Promise.allSettled(Array.from({ length: connections }, () => pool.connect()));
    for (const c of connected) if (c.status === 'fulfilled') clients.push(c.value);
    for (const c of connected) if (c.status === 'rejected') throw c.reason;
    const [first, ...rest] = clients;
    const exported = await first!.query<{ snapshot: string }>('begin isolation level repeatable read, read only; select pg_export_snapshot() as snapshot');
    opened.push(first!);
    const snapshot = (exported as unknown as Array<pg.QueryResult<{ snapshot: string }>>)[1]!.rows[0]!.snapshot;
    await Promise.all(
      rest.map(async (c) => {
        await c.query(`begin isolation level repeatable read, read only; set transaction snapshot ${c.escapeLiteral(snapshot)}`);
        opened.push(c);
      }),
    );
    for (const c of clients) inFlight.set(c, 0);
    const reads: DeskReads = {
      query<R extends pg.QueryResultRow>(text: string, params?: unknown[]) {
        let c = clients[0]!;
        for (const other of clients) if (inFlight.get(other)! < inFlight.get(c)!) c = other;
        inFlight.set(c, inFlight.get(c)! + 1);
        const q = c.query<R>(text, params).finally(() => inFlight.set(c, inFlight.get(c)! - 1));
        pending.add(q);
        q.catch(() => undefined).finally(() => pending.delete(q));
        return q;
      },
    };
    return await read(reads);
  } catch (err) {
    failed = err as Error;
    throw err;
  } finally {
    // A connection goes back to the pool only idle and out of its transaction; one that cannot end it is dropped.
    await Promise.all([...pending].map((q) => q.catch(() => undefined)));
    await Promise.all(
      clients.map(async (c) => {
        if (!opened.includes(c)) return c.release(failed);
        try {
          await c.query('commit');
          c.release();
        } catch (err) {
          c.release(err as Error);
        }
      }),
    );
  }
}
