import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { upsertBeats, type Beat } from '../src/agent/liveness-writer.js';
import { usePool } from '../../../test/support/db.js';

// How the liveness table stores a beat, which is what PostgreSQL's CPU per beat comes from: the GPU health kept
// as the JSON text it was sent as (text: the API checked it, so not lexed again as json, nor rebuilt as jsonb),
// and a beat's update staying on its row's page (HOT: no new index entry), which needs free room on the pages
// (fillfactor).

const db = usePool(2);
let pool: pg.Pool;
beforeAll(() => {
  pool = db.pool();
});

const node = (i: number) => `node_${i.toString(16).padStart(32, '0')}`;
const gpus = (t: number) => Array.from({ length: 8 }, (_, index) => ({ index, healthy: index !== 3, temperature_c: t, utilization: 0.97, memory_used_gb: 70.5, ecc_errors: index === 3 ? 2 : 0 }));
const beats = (from: number, n: number, at: Date, t: number): Beat[] =>
  Array.from({ length: n }, (_, i) => ({ node_id: node(from + i), tenant_id: 'ten_x', at, health: gpus(t + (i % 5)), task: null }));

describe('liveness storage', () => {
  it('keeps each beat’s GPU health as the JSON text it was sent as, and readers of health::json get the same list back', async () => {
    const at = new Date('2026-12-06T08:00:00.000Z');
    const sent = beats(0, 3, at, 60);
    await upsertBeats(pool, sent);
    const { rows } = await pool.query<{ node_id: string; text: string; health: unknown; type: string }>(
      `select node_id, health as text, health::json as health, pg_typeof(health)::text as type from node_liveness where node_id = any($1) order by node_id`,
      [sent.map((b) => b.node_id)],
    );
    expect(rows).toHaveLength(3);
    for (const [i, row] of rows.entries()) {
      expect(row.type).toBe('text');
      // jsonb would have rebuilt it (its own key order and spacing): the text is the sent JSON, byte for byte.
      expect(row.text).toBe(JSON.stringify(sent[i]!.health));
      expect(row.health).toEqual(sent[i]!.health);
    }

    // A newer beat replaces the health; an older one arriving late does not bring its health back.
    await upsertBeats(pool, [{ ...sent[0]!, at: new Date(at.getTime() + 2_000), health: gpus(70) }]);
    await upsertBeats(pool, [{ ...sent[0]!, at: new Date(at.getTime() + 1_000), health: gpus(65) }]);
    const row = (await pool.query<{ health: unknown }>('select health::json as health from node_liveness where node_id = $1', [node(0)])).rows[0];
    expect(row?.health).toEqual(gpus(70));
  });

  it('leaves room on its pages, so a beat\'s new row version fits on its old one\'s page (a HOT update)', async () => {
    const { rows: opts } = await pool.query<{ reloptions: string[] | null }>(`select reloptions from pg_class where relname = 'node_liveness'`);
    expect(opts[0]?.reloptions).toContain('fillfactor=70');

    // 60 nodes with 8 GPUs each fill several pages. Whether a page keeps its dead versions a while (pruning waits
    // for older snapshots) varies; what must hold is that each filled page has room for one more version of its
    // largest row, which a full page (fillfactor 100) does not.
    const at = new Date('2026-12-06T09:00:00.000Z');
    await upsertBeats(pool, beats(1000, 60, at, 60));
    const { rows: pages } = await pool.query<{ page: number; used: number; largest: number; nodes: string[] }>(
      `select (ctid::text::point)[0]::int as page, sum(pg_column_size(l.*) + 4)::int as used, max(pg_column_size(l.*))::int as largest,
              array_agg(node_id order by node_id) as nodes
         from node_liveness l where node_id >= $1 group by 1 order by 1`,
      [node(1000)],
    );
    expect(pages.length).toBeGreaterThan(3);
    for (const p of pages.slice(0, -1)) expect(8192 - 24 - p.used).toBeGreaterThan(p.largest + 4);

    // And a node's next beat is written on the page its row was on.
    const first = pages[0]!;
    const beat = beats(1000, 60, at, 60).find((b) => b.node_id === first.nodes[0])!;
    await upsertBeats(pool, [{ ...beat, at: new Date(at.getTime() + 2_000), health: gpus(61) }]);
    const { rows } = await pool.query<{ page: number }>(`select (ctid::text::point)[0]::int as page from node_liveness where node_id = $1`, [beat.node_id]);
    expect(rows[0]?.page).toBe(first.page);
  });

  it('keeps each beat of one statement at its own time: runs of one request\'s Date, a time seen again later, and each beat\'s own ids', async () => {
    // The statement sends each distinct run of a Date once and each beat its position among them.
    const t = (s: number) => new Date(Date.UTC(2026, 11, 6, 10, 0, s, 250));
    const [a, b, c] = [t(0), t(2), t(4)];
    const times = [a, a, a, b, b, c, a, a, new Date(b.getTime()), c];
    const sent: Beat[] = times.map((at, i) => ({ node_id: node(2000 + i), tenant_id: i % 2 === 0 ? 'ten_even' : 'ten_odd', at, health: gpus(60 + i), task: null }));
    await upsertBeats(pool, sent);
    const { rows } = await pool.query<{ node_id: string; tenant_id: string; last_heartbeat_at: Date; progress_at: Date | null; health: unknown }>(
      `select node_id, tenant_id, last_heartbeat_at, progress_at, health::json as health from node_liveness where node_id = any($1) order by node_id`,
      [sent.map((x) => x.node_id)],
    );
    expect(rows.map((r) => [r.node_id, r.tenant_id, r.last_heartbeat_at.toISOString(), r.progress_at?.toISOString() ?? null, r.health])).toEqual(
      sent.map((x) => [x.node_id, x.tenant_id, x.at.toISOString(), x.at.toISOString(), x.health]),
    );
  });
});
