import type pg from 'pg';
import { beginProjectionBatch } from './batch-transaction.js';
import { foldedCatchUp, type CatchUpOptions, type CatchUpResult, type CatchUpSession } from './projection-catch-up-folded.js';
import { readSafe } from './read.js';
import type { Upcasters } from './rows.js';
import type { AnyEvents, AsyncProjection, StoredEvent } from './types.js';

export type { CatchUpOptions, CatchUpResult };

/**
 * Applies batches after the projection's checkpoint until the log's head (or `stop`), reading each next batch on
 * a second connection while the current one is written, so reading and folding overlap instead of taking turns.
 * Every batch is its own transaction with the same compare-and-set as `runProjectionBatch`: the checkpoint moves
 * from the position the batch was read after, or nothing is applied. When another runner moved it meanwhile, the
 * read-ahead is dropped and reading starts again from where that runner left the checkpoint, so no event is
 * applied twice or skipped. A projection with a `fold` is also folded one batch ahead of its writes
 * (projection-catch-up-folded.ts).
 */
export async function catchUpProjection(pool: pg.Pool, upcasters: Upcasters, p: AsyncProjection<AnyEvents>, opts: CatchUpOptions = {}): Promise<CatchUpResult> {
  const batchSize = opts.batchSize ?? 500;
  await pool.query('insert into projection_checkpoints (name) values ($1) on conflict (name) do nothing', [p.name]);
  const reader = await pool.connect();
  const writer = await pool.connect();
  const reads = new Set<Promise<StoredEvent[]>>();
  const session: CatchUpSession = {
    pool,
    writer,
    readAfter(after) {
      const read = readSafe(reader, { after, limit: batchSize, ...(p.handles ? { types: p.handles } : {}), payloadsOnly: p.payloadsOnly === true }).then((events) => events.map((e) => upcasters.apply(e)));
      reads.add(read);
      // Awaited by the loop, or settled below before the reader goes back to the pool.
      read.catch(() => undefined).finally(() => reads.delete(read));
      return read;
    },
    checkpoint: async () => Number((await writer.query<{ position: string }>('select position::text as position from projection_checkpoints where name = $1', [p.name])).rows[0]?.position ?? 0),
  };
  try {
    return p.fold ? await foldedCatchUp(session, p, opts) : await appliedCatchUp(session, p, opts);
  } finally {
    // A client goes back to the pool only with no query in flight.
    await Promise.all([...reads].map((r) => r.catch(() => undefined)));
    reader.release();
    writer.release();
  }
}

async function appliedCatchUp({ writer, readAfter, checkpoint }: CatchUpSession, p: AsyncProjection<AnyEvents>, opts: CatchUpOptions): Promise<CatchUpResult> {
  let applied = 0;
  let from = await checkpoint();
  let next = readAfter(from);
  for (;;) {
    const batch = await next;
    const last = batch[batch.length - 1];
    if (!last) return { applied, caughtUp: true };
    const stopping = opts.stop?.() ?? false;
    if (!stopping) next = readAfter(last.position);
    try {
      if (!(await beginProjectionBatch(writer, p, from, last.position))) {
        await writer.query('rollback');
        if (stopping) return { applied, caughtUp: false };
        // Another runner applied from here: drop what was read ahead and go on from where it left off.
        await next.catch(() => undefined);
        from = await checkpoint();
        next = readAfter(from);
        continue;
      }
      await p.apply(writer, batch);
      await writer.query('commit');
    } catch (err) {
      await writer.query('rollback').catch(() => undefined);
      throw err;
    }
    applied += batch.length;
    from = last.position;
    if (stopping || (opts.stop?.() ?? false)) return { applied, caughtUp: false };
  }
}
