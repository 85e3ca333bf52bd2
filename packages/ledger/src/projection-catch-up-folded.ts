import type pg from 'pg';
import { beginProjectionBatch } from './batch-transaction.js';
import type { AnyEvents, AsyncProjection, FoldedBatch, StoredEvent } from './types.js';

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

/** What both catch-up loops share: the two connections, the read-ahead and the checkpoint's read. */
export interface CatchUpSession {
  pool: pg.Pool;
  writer: pg.PoolClient;
  /** Starts reading the batch after `after` on the reader connection (awaited by the loop, or settled before the reader goes back). */
  readAfter(after: number): Promise<StoredEvent[]>;
  checkpoint(): Promise<number>;
}

/** A batch handed to the writer connection: its transaction, running while the next batch is folded. */
interface InFlight {
  /** True once committed; false when the checkpoint had moved (nothing applied); rejects with the write's error. */
  done: Promise<boolean>;
  events: number;
}

/**
 * The catch-up of a projection with a `fold`: batch N+1 is folded in this process while batch N's transaction
 * runs in the database, so the fold's CPU and the write's no longer take turns. Batch N+1's transaction starts
 * only once batch N's committed (one writer connection, one transaction at a time); its fold is handed what
 * batch N's fold carried, since batch N's rows may not be visible yet. When batch N finds the checkpoint moved by
 * another runner, it applied nothing and the fold of N+1 is dropped with the read-ahead: reading, folding and the
 * carried state start again from the checkpoint that runner left, as in the applying catch-up.
 */
export async function foldedCatchUp(s: CatchUpSession, p: AsyncProjection<AnyEvents>, opts: CatchUpOptions): Promise<CatchUpResult> {
  const fold = p.fold!.bind(p);
  let applied = 0;
  let from = await s.checkpoint();
  let next = s.readAfter(from);
  let carried: unknown = null;
  let inFlight: InFlight | null = null;
  /** Waits for the batch in flight (rethrowing its failure): false when it found the checkpoint moved. */
  const land = async (): Promise<boolean> => {
    const f = inFlight;
    inFlight = null;
    if (!f) return true;
    const committed = await f.done;
    if (committed) applied += f.events;
    return committed;
  };
  const restart = async () => {
    carried = null;
    await next.catch(() => undefined);
    from = await s.checkpoint();
    next = s.readAfter(from);
  };
  try {
    for (;;) {
      const batch = await next;
      const last = batch[batch.length - 1];
      if (!last) {
        if (await land()) return { applied, caughtUp: true };
        await restart();
        continue;
      }
      const stopping = opts.stop?.() ?? false;
      if (!stopping) next = s.readAfter(last.position);
      let folded: FoldedBatch | null = await fold(s.pool, batch, carried);
      // This batch's transaction starts once the one before it committed.
      const landing = inFlight !== null;
      if (!(await land())) {
        if (stopping) return { applied, caughtUp: false };
        await restart();
        continue;
      }
      // `stop` is asked after each applied batch: the one folded since is dropped.
      if (landing && (opts.stop?.() ?? false)) return { applied, caughtUp: false };
      folded ??= await fold(s.pool, batch, null);
      if (folded === null) throw new Error(`projection ${p.name}: fold found nothing to carry on from with every batch before it committed`);
      const done = handOff(s.writer, p, from, last.position, folded);
      done.catch(() => undefined); // awaited by land(), or settled below before the writer goes back to the pool
      inFlight = { done, events: batch.length };
      carried = folded.carry;
      from = last.position;
      if (stopping || (opts.stop?.() ?? false)) {
        await land();
        return { applied, caughtUp: false };
      }
    }
  } finally {
    await inFlight?.done.catch(() => undefined);
  }
}

/** One batch's transaction: the checkpoint's compare-and-set from `from` to `to`, then the batch's writes. */
async function handOff(writer: pg.PoolClient, p: AsyncProjection<AnyEvents>, from: number, to: number, folded: FoldedBatch): Promise<boolean> {
  try {
    if (!(await beginProjectionBatch(writer, p, from, to))) {
      await writer.query('rollback');
      return false;
    }
    await folded.write(writer);
    await writer.query('commit');
    return true;
  } catch (err) {
    await writer.query('rollback').catch(() => undefined);
    throw err;
  }
}
