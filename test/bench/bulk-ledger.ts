/**
 * Writes a large ledger fast, for benchmarks: events go in with multi-row INSERTs (`unnest` of arrays, `batch`
 * rows a statement) carrying the content hash the ledger itself computes (`contentHash`, the canonical hashing),
 * each at its own `recorded_at`. The rows bypass the inline projections (a bench builds what it needs from them)
 * and are not sealed: `ledger.sealPending()` links them when a bench needs the chain. The next batch is built (JSON
 * and hashing: this process's CPU) while the previous one is inserted (the server's CPU), one INSERT in flight at a
 * time so positions keep the order given.
 */
import type pg from 'pg';
import { contentHash } from '../../packages/ledger/src/index.js';

export interface BulkEvent {
  stream: string;
  version: number;
  type: string;
  data: Record<string, unknown>;
  at: Date;
}

const METADATA = { actor: 'bench' };

/** Writes the events in the order given (that order becomes their positions); returns how many were written. */
export async function writeBulkEvents(pool: pg.Pool, tenantId: string, events: Iterable<BulkEvent>, batch = 10_000): Promise<number> {
  let written = 0;
  let cols = emptyColumns();
  let inFlight: Promise<void> = Promise.resolve();
  const flush = async () => {
    if (cols.stream.length === 0) return;
    const batchCols = cols;
    cols = emptyColumns();
    await inFlight;
    inFlight = insert(batchCols);
    inFlight.catch(() => {}); // awaited (and thrown) at the next flush; not an unhandled rejection meanwhile
  };
  const insert = async (cols: ReturnType<typeof emptyColumns>) => {
    await pool.query(
      `insert into events (stream_id, stream_version, tenant_id, type, schema_version, data, metadata, recorded_at, content_hash)
       select s, v, $7, t, 1, d::jsonb, $8::jsonb, a, h
       from unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::timestamptz[], $6::text[]) as x(s, v, t, d, a, h)`,
      [cols.stream, cols.version, cols.type, cols.data, cols.at, cols.hash, tenantId, JSON.stringify(METADATA)],
    );
    written += cols.stream.length;
  };
  for (const e of events) {
    cols.stream.push(e.stream);
    cols.version.push(e.version);
    cols.type.push(e.type);
    cols.data.push(JSON.stringify(e.data));
    cols.at.push(e.at.toISOString());
    cols.hash.push(contentHash({ tenantId, streamId: e.stream, type: e.type, schemaVersion: 1, data: e.data, metadata: METADATA, recordedAt: e.at }));
    if (cols.stream.length >= batch) await flush();
    // Building a batch is synchronous: give the event loop a turn now and then, so the INSERT in flight is written
    // out and its answer read while this one is built.
    else if (cols.stream.length % 500 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  await flush();
  await inFlight;
  return written;
}

function emptyColumns() {
  return { stream: [] as string[], version: [] as number[], type: [] as string[], data: [] as string[], at: [] as string[], hash: [] as string[] };
}
