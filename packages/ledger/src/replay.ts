import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openEventReader } from './replay-reader.js';
import { DeferredWrites } from './replay-writes.js';
import { EVENT_COLUMNS, Upcasters, toStoredEvent } from './rows.js';
import type { AnyEvents, EventMap, StoredEventOf, TypeOf, Upcaster } from './types.js';

/** A table a projection writes, named as in the live schema, with its key and the column naming its tenant. */
export interface ReplayTable {
  name: string;
  key: string[];
  tenantColumn: string;
}

/**
 * A projection the auditor can rebuild: anything with `apply` over events (inline or async alike) and the
 * tables it writes. It writes them by unqualified name, so the replay points it at scratch copies through the
 * search path. In a replay its writes are sent in bulk (replay-writes.ts): a write without RETURNING answers at
 * once with no rows and a null rowCount and runs, in order, before the projection's next read; a projection
 * that needs to know what a write changed asks with RETURNING.
 */
export interface ReplayableProjection<M extends EventMap = AnyEvents> {
  name: string;
  handles?: TypeOf<M>[];
  apply(client: pg.ClientBase, events: StoredEventOf<M>[]): Promise<void>;
  tables: ReplayTable[];
}

/**
 * The projections a replay rebuilds, in the order they are applied to each batch (a projection may read what
 * an earlier one wrote). Packages add theirs by registering; nothing else needs to know.
 */
export class ProjectionRegistry {
  private readonly list: ReplayableProjection[] = [];

  register(p: ReplayableProjection): this {
    if (this.list.some((q) => q.name === p.name)) throw new Error(`projection ${p.name} is registered twice`);
    for (const t of p.tables) for (const id of [t.name, t.tenantColumn, ...t.key]) assertIdentifier(id);
    this.list.push(p);
    return this;
  }

  all(): readonly ReplayableProjection[] {
    return this.list;
  }
}

export type AsOf = { position: number } | { time: Date };

/** The tenant's events up to the as-of point: $1 tenant, $2 last position or null, $3 last recording time or null. */
const RANGE_SQL = `e.tenant_id = $1 and ($2::bigint is null or e.position <= $2) and ($3::timestamptz is null or e.recorded_at <= $3)`;

export interface FieldDifference {
  projection: string;
  table: string;
  /** The row's key columns and values. */
  key: Record<string, unknown>;
  /** The column that differs, or `(row)` when the row exists on one side only. */
  field: string;
  live: unknown;
  replayed: unknown;
}

export interface ReplayOptions {
  /** Rebuild from this tenant's events only, and compare only its rows. */
  tenantId: string;
  /** Stop after this position or this recording time; the live projections are then not compared. */
  asOf?: AsOf;
  upcasters?: Upcaster[];
  batchSize?: number;
  /** Most differences reported; the count says how many there were. @defaultValue 1000 */
  maxDifferences?: number;
  /** Rows to return from the scratch tables: table name → column → value (tenant's rows only). */
  select?: Record<string, Record<string, string>>;
}

export interface ReplayResult {
  applied: number;
  last_position: number | null;
  differences: FieldDifference[];
  difference_count: number;
  /** Rows read back from the scratch tables per `select`. */
  rows: Record<string, Record<string, unknown>[]>;
}

/**
 * Rebuilds every registered projection from position 0 into a scratch schema and compares it with the live
 * tables, in one REPEATABLE READ transaction on a connection of its own: the events it replays and the live
 * rows it compares with are one snapshot, so a write landing meanwhile is in both or in neither. The
 * transaction is rolled back at the end, scratch schema and all, so a replay leaves nothing behind (and a
 * notification a projection sends is dropped with it).
 */
export async function replayProjections(pool: pg.Pool, registry: ProjectionRegistry, opts: ReplayOptions): Promise<ReplayResult> {
  const upcasters = new Upcasters(opts.upcasters);
  const schema = `ito_replay_${randomBytes(8).toString('hex')}`;
  const client = new pg.Client(pool.options as pg.ClientConfig);
  await client.connect();
  try {
    await client.query('begin isolation level repeatable read');
    await client.query(`create schema ${schema}`);
    const projections = registry.all();
    for (const p of projections) for (const t of p.tables) await client.query(`create table ${schema}.${t.name} (like public.${t.name} including all)`);
    await client.query(`set local search_path to ${schema}, public`);

    const asOfPosition = opts.asOf && 'position' in opts.asOf ? opts.asOf.position : null;
    const asOfTime = opts.asOf && 'time' in opts.asOf ? opts.asOf.time.toISOString() : null;
    const range = [opts.tenantId, asOfPosition, asOfTime] as const;
    // Every event counts as applied (and the last position is the range's), but only the events some projection
    // handles are read: an event none handles changes no table.
    const types = projections.every((p) => p.handles) ? [...new Set(projections.flatMap((p) => p.handles!))] : null;
    const { rows: span } = await client.query<{ n: number; last: string | null }>(
      `select count(*)::int as n, max(e.position)::text as last from public.events e where ${RANGE_SQL}`,
      [...range],
    );
    const writes = new DeferredWrites(client);
    // A server-side cursor in the transaction's snapshot, read a batch ahead on a second connection
    // (replay-reader.ts). Position order: within a stream it is version order (a version is inserted only once
    // the one before it is visible), and every event of this snapshot is in it, committed late or not.
    const batchSize = Math.max(1, Math.floor(opts.batchSize ?? 5000));
    const events = await openEventReader(
      pool.options as pg.ClientConfig,
      client,
      `select ${EVENT_COLUMNS} from public.events e where ${RANGE_SQL} and ($4::text[] is null or e.type = any($4::text[])) order by e.position`,
      [...range, types],
      batchSize,
    );
    try {
      for (let rows = await events.next(); rows.length > 0; rows = await events.next()) {
        const batch = rows.map((r) => upcasters.apply(toStoredEvent(r)));
        for (const p of projections) {
          const handled = p.handles ? batch.filter((e) => p.handles!.includes(e.type)) : batch;
          if (handled.length > 0) await p.apply(writes.client, handled);
        }
        await writes.flush();
      }
    } finally {
      await events.close();
    }
    const applied = span[0]?.n ?? 0;
    const after = Number(span[0]?.last ?? 0);

    const max = opts.maxDifferences ?? 1000;
    const differences: FieldDifference[] = [];
    let count = 0;
    if (!opts.asOf) {
      for (const p of projections) {
        for (const t of p.tables) {
          for (const d of await diffTable(client, schema, p.name, t, opts.tenantId)) {
            count += 1;
            if (differences.length < max) differences.push(d);
          }
        }
      }
    }
    const rowsOut: Record<string, Record<string, unknown>[]> = {};
    for (const [table, where] of Object.entries(opts.select ?? {})) {
      const t = projections.flatMap((p) => p.tables).find((x) => x.name === table);
      if (!t) continue;
      const cols = Object.keys(where);
      cols.forEach(assertIdentifier);
      const cond = cols.map((c, i) => `and ${c}::text = $${i + 2}`).join(' ');
      const { rows } = await client.query<{ row: Record<string, unknown> }>(
        `select to_jsonb(t) as row from ${schema}.${t.name} t where ${t.tenantColumn} = $1 ${cond} order by ${t.key.join(', ')} limit 1000`,
        [opts.tenantId, ...cols.map((c) => where[c])],
      );
      rowsOut[table] = rows.map((r) => r.row);
    }
    return { applied, last_position: after || null, differences, difference_count: count, rows: rowsOut };
  } finally {
    await client.query('rollback').catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}

async function diffTable(client: pg.Client, schema: string, projection: string, t: ReplayTable, tenantId: string): Promise<FieldDifference[]> {
  const keyExpr = `jsonb_build_array(${t.key.map((k) => `x.${k}`).join(', ')})`;
  const { rows } = await client.query<{ live: Record<string, unknown> | null; replayed: Record<string, unknown> | null }>(
    `select l.j as live, s.j as replayed
     from (select ${keyExpr} as k, to_jsonb(x) as j from public.${t.name} x where x.${t.tenantColumn} = $1) l
     full join (select ${keyExpr} as k, to_jsonb(x) as j from ${schema}.${t.name} x where x.${t.tenantColumn} = $1) s on l.k = s.k
     where l.j is distinct from s.j
     order by coalesce(l.k, s.k)`,
    [tenantId],
  );
  const out: FieldDifference[] = [];
  for (const r of rows) {
    const either = (r.live ?? r.replayed)!;
    const key = Object.fromEntries(t.key.map((k) => [k, either[k]]));
    if (!r.live || !r.replayed) {
      out.push({ projection, table: t.name, key, field: '(row)', live: r.live ? 'present' : 'absent', replayed: r.replayed ? 'present' : 'absent' });
      continue;
    }
    for (const field of new Set([...Object.keys(r.live), ...Object.keys(r.replayed)])) {
      if (JSON.stringify(r.live[field]) !== JSON.stringify(r.replayed[field])) out.push({ projection, table: t.name, key, field, live: r.live[field] ?? null, replayed: r.replayed[field] ?? null });
    }
  }
  return out;
}

function assertIdentifier(id: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(id)) throw new Error('a projection table or column is a lower-case identifier');
}
