import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { ProjectionRegistry, createLedger, replayProjections, type InlineProjection, type StoredEvent } from '../src/index.js';
import { settled, usePool } from './harness.js';

/**
 * The replay sends a projection's writes in bulk (values written in as literals, single-row INSERTs merged into
 * multi-row ones, a batch's writes in one round trip). The rebuilt rows must be exactly those the projection
 * wrote live one statement at a time: hostile text, arrays, JSON and instants included, a duplicate insert
 * skipped, and a read that follows a waiting write seeing it.
 */
const db = usePool();
const T = 'ten-notes';
const HOSTILE = ["o'clock", 'back\\slash \\x41', '$1 and $2', 'line\nbreak -- not a comment /* nor this', '{"a": [1, "b"]}', 'é ✓ 𝄞', "E'x'"];

async function addNote(client: pg.ClientBase, e: StoredEvent): Promise<void> {
  const d = e.data as { note_id: string; body: string; tags: string[]; doc: unknown; n: number | null };
  await client.query(
    `insert into notes (note_id, tenant_id, body, tags, doc, at, n, version)
     values ($1, $2, $3, $4, $5, $6, $7, $8)
     on conflict (note_id) do nothing`,
    [d.note_id, e.tenantId, d.body, d.tags, JSON.stringify(d.doc), e.recordedAt, d.n, e.streamVersion],
  );
}

/** An edit appends to the body it reads: it sees the rows written before it, or the rebuilt body differs. */
async function editNote(client: pg.ClientBase, e: StoredEvent): Promise<void> {
  const d = e.data as { note_id: string; more: string };
  const { rows } = await client.query<{ body: string }>('select body from notes where note_id = $1', [d.note_id]);
  if (!rows[0]) return;
  await client.query('update notes set body = $2, version = $3 where note_id = $1 and version < $3', [d.note_id, rows[0].body + d.more, e.streamVersion]);
}

const notes: InlineProjection = {
  name: 'notes',
  handles: ['NoteAdded', 'NoteEdited'],
  async apply(client, events) {
    for (const e of events) await (e.type === 'NoteAdded' ? addNote(client, e) : editNote(client, e));
  },
};
const registry = new ProjectionRegistry().register({ ...notes, tables: [{ name: 'notes', key: ['note_id'], tenantColumn: 'tenant_id' }] });

let total = 0;
beforeAll(async () => {
  await db.pool().query(
    'create table notes (note_id text primary key, tenant_id text not null, body text not null, tags text[] not null, doc jsonb, at timestamptz not null, n int, version int not null)',
  );
  const ledger = createLedger({ pool: db.pool(), inlineProjections: [notes] });
  for (let i = 0; i < 24; i++) {
    const body = HOSTILE[i % HOSTILE.length]!;
    const events = [
      { type: 'NoteAdded', data: { note_id: `n${i}`, body, tags: [body, 'a,b', '{c}', 'NULL'], doc: { body, nested: [i, null, true] }, n: i % 3 ? i : null } },
      { type: 'NoteEdited', data: { note_id: `n${i}`, more: ` +${HOSTILE[(i + 1) % HOSTILE.length]}` } },
      // Not handled by any projection: counted as applied, never read.
      { type: 'NoteViewed', data: { note_id: `n${i}` } },
    ];
    await ledger.append(`note-${i}`, events, { tenantId: T, expectedVersion: 'no_stream' });
    total += events.length;
  }
  // A second NoteAdded for an existing note is skipped live; in a merged insert it must be skipped too.
  await ledger.append('note-0', [{ type: 'NoteAdded', data: { note_id: 'n0', body: 'duplicate', tags: [], doc: null, n: 0 } }], { tenantId: T, expectedVersion: 3 });
  total += 1;
  await settled(db.pool());
});

describe('replay with bulk writes', () => {
  it('rebuilds exactly the rows written live, whatever the batch size', async () => {
    const last = Number((await db.pool().query<{ p: string }>('select max(position)::text as p from events where tenant_id = $1', [T])).rows[0]!.p);
    const { rows: live } = await db.pool().query<{ n: number }>("select count(*)::int as n from notes where body like '%+%'");
    expect(live[0]!.n).toBe(24);
    for (const batchSize of [1, 4, 7, 1000]) {
      const result = await replayProjections(db.pool(), registry, { tenantId: T, batchSize });
      expect(result, `batches of ${batchSize}`).toMatchObject({ applied: total, last_position: last, difference_count: 0, differences: [] });
    }
  });

  it('still names a live row changed behind the ledger', async () => {
    await db.pool().query("update notes set tags = array['forged'] where note_id = 'n5'");
    try {
      const result = await replayProjections(db.pool(), registry, { tenantId: T });
      expect(result.differences).toEqual([expect.objectContaining({ table: 'notes', key: { note_id: 'n5' }, field: 'tags' })]);
    } finally {
      await db.pool().query("update notes set tags = $1 where note_id = 'n5'", [[HOSTILE[5], 'a,b', '{c}', 'NULL']]);
    }
  });
});
