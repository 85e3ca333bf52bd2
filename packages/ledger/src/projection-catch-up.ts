import type pg from 'pg';
import { readSafe } from './read.js';
import type { Upcasters } from './rows.js';
import type { AnyEvents, AsyncProjection, StoredEvent } from './types.js';

export interface CatchUpOptions {
  batchSize?: number;
  /** Asked after each applied batch: true stops the catch-up there (a reader's time budget). */
  stop?: () => boolean;
}

export interface CatchUpResult {
  applied: number;
  /** The projection reached the head of the log (a batch came back empty). */
  caughtUp: boolean;
}

/**
 * Applies batches after the projection's checkpoint until the log's head (or `stop`), reading each next batch on
 * a second connection while the current one is written, so reading and folding overlap instead of taking turns.
 * Every batch is its own transaction with the same compare-and-set as `runProjectionBatch`: the checkpoint moves
 * from the position the batch was read after, or nothing is applied. When another runner moved it meanwhile, the
 * read-ahead is dropped and reading starts again from where that runner left the checkpoint, so no event is
 * applied twice or skipped.
 */
export async function catchUpProjection(pool: pg.Pool, upcasters: Upcasters, p: AsyncProjection<AnyEvents>, opts: CatchUpOptions = {}): Promise<CatchUpResult> {
  const batchSize = opts.batchSize ?? 500;
  await pool.query('insert into projection_checkpoints (name) values ($1) on conflict (name) do nothing', [p.name]);
  const reader = await pool.connect();
  const writer = await pool.connect();
  let ahead: Promise<StoredEvent[]> | null = null;
  const readAfter = (after: number) => {
    const read = readSafe(reader, { after, limit: batchSize, ...(p.handles ? { types: p.handles } : {}) }).then((events) => events.map((e) => upcasters.apply(e)));
    read.catch(() => undefined); // awaited below, or settled before the reader goes back to the pool
    return read;
  };
  const checkpoint = async () => Number((await writer.query<{ position: string }>('select position::text as position from projection_checkpoints where name = $1', [p.name])).rows[0]?.position ?? 0);
  let applied = 0;
  try {
    let from = await checkpoint();
    let next = readAfter(from);
    ahead = next;
    for (;;) {
      const batch = await next;
      ahead = null;
      const last = batch[batch.length - 1];
      if (!last) return { applied, caughtUp: true };
      const stopping = opts.stop?.() ?? false;
      if (!stopping) ahead = next = readAfter(last.position);
      await writer.query('begin');
      try {
        const cas = await writer.query('update projection_checkpoints set position = $2, updated_at = now() where name = $1 and position = $3', [p.name, last.position, from]);
        if (cas.rowCount !== 1) {
          await writer.query('rollback');
          if (stopping) return { applied, caughtUp: false };
          // Another runner applied from here: drop what was read ahead and go on from where it left off.
          await ahead?.catch(() => undefined);
          ahead = null;
          from = await checkpoint();
          ahead = next = readAfter(from);
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
  } finally {
    // A client goes back to the pool only with no query in flight.
    await ahead?.catch(() => undefined);
    reader.release();
    writer.release();
  }
}
