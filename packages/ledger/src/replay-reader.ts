import pg from 'pg';
import type { EventRow } from './rows.js';

/** Batches of a replay's events, in order; an empty batch after the last. */
export interface EventReader {
  next(): Promise<EventRow[]>;
  close(): Promise<void>;
}

/**
 * Reads a replay's events on a connection of its own, in the replaying transaction's snapshot (exported by
 * `writer`, imported here), through a server-side cursor, one batch ahead: while the projections apply a batch
 * and the writer sends its rows, this connection's backend is already reading and sending the next. Reading and
 * writing then overlap (two backends, and the driver's parsing of one batch beside the projections' work on
 * the other), where on one connection each waited for the other. Memory holds two batches.
 */
export async function openEventReader(config: pg.ClientConfig, writer: pg.Client, query: string, values: unknown[], batchSize: number): Promise<EventReader> {
  const { rows } = await writer.query<{ snapshot: string }>('select pg_export_snapshot() as snapshot');
  const reader = new pg.Client(config);
  await reader.connect();
  let pending: Promise<EventRow[]> | null = null;
  try {
    await reader.query('begin isolation level repeatable read read only');
    await reader.query(`set transaction snapshot ${reader.escapeLiteral(rows[0]!.snapshot)}`);
    await reader.query(`declare ito_replay_read no scroll cursor for ${query}`, values);
  } catch (err) {
    await reader.end().catch(() => undefined);
    throw err;
  }
  const fetch = (): Promise<EventRow[]> => {
    const p = reader.query<EventRow>(`fetch ${batchSize} from ito_replay_read`).then((r) => r.rows);
    p.catch(() => undefined); // awaited by next(), or dropped by close()
    return p;
  };
  pending = fetch();
  return {
    async next() {
      if (pending === null) return [];
      const batch = await pending;
      pending = batch.length < batchSize ? null : fetch();
      return batch;
    },
    async close() {
      await pending?.catch(() => undefined);
      pending = null;
      await reader.query('rollback').catch(() => undefined);
      await reader.end().catch(() => undefined);
    },
  };
}
