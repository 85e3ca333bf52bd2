import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runStreamId, type RunEvent } from '@ito/domain';
import { RUN_EVENTS_CHANNEL, createApiLedger, createRun, newRunAppend } from '@ito/runs';
import { usePool } from '../../ledger/test/harness.js';
import { RUN, planned, started } from '../../domain/test/support/run-history.js';

/**
 * The runs projection names the runs a transaction changed on RUN_EVENTS_CHANNEL, delivered at commit: the relay
 * looks at exactly those. A new run alone in its append has its row and its notification in one statement; new
 * runs appended together, and a later change, are notified too; a rolled-back transaction notifies nothing.
 */
const db = usePool(4);
const TENANT = `ten_${'3'.repeat(32)}`;
let runs = 0;
let listener: pg.Client;
const heard: string[] = [];

beforeAll(async () => {
  listener = new pg.Client({ connectionString: db.url() });
  await listener.connect();
  listener.on('notification', (m) => {
    if (m.channel === RUN_EVENTS_CHANNEL) heard.push(...(m.payload ?? '').split(','));
  });
  await listener.query(`listen ${RUN_EVENTS_CHANNEL}`);
});
afterAll(async () => listener.end());

function history(): { runId: string; events: RunEvent[] } {
  runs += 1;
  const runId = `run_${runs.toString(16).padStart(32, 'd')}`;
  const events = JSON.parse(JSON.stringify(planned()).replaceAll(RUN, runId)) as RunEvent[];
  const reserve = events[0]!;
  if (reserve.type === 'RunReserved') reserve.data.idempotency_key = runId;
  return { runId, events };
}

/** What was heard once a marker notification sent after the transaction arrives (delivery is in commit order). */
async function heardUntilMarker(): Promise<string[]> {
  const marker = `marker-${runs}-${Date.now()}`;
  await db.pool().query('select pg_notify($1, $2)', [RUN_EVENTS_CHANNEL, marker]);
  for (let i = 0; i < 200 && !heard.includes(marker); i++) await new Promise((r) => setTimeout(r, 10));
  const got = heard.splice(0, heard.length);
  expect(got.at(-1)).toBe(marker);
  return got.slice(0, -1);
}

describe('the runs projection notifies the relay', () => {
  it('names a new run once, at commit, with its row written', async () => {
    await heardUntilMarker();
    const { runId, events } = history();
    await createApiLedger(db.pool()).transaction((tx) => createRun(tx, TENANT, runId, events, { actor: 'test' }));
    expect(await heardUntilMarker()).toEqual([runId]);
    const { rows } = await db.pool().query('select version from runs where run_id = $1', [runId]);
    expect(rows[0]?.version).toBe(events.length);
  });

  it('names a run a later append changed', async () => {
    const { runId, events } = history();
    await createApiLedger(db.pool()).transaction((tx) => createRun(tx, TENANT, runId, events, { actor: 'test' }));
    await heardUntilMarker();
    const more = (JSON.parse(JSON.stringify(started(planned(), 'pretrain')).replaceAll(RUN, runId)) as RunEvent[]).slice(events.length);
    await createApiLedger(db.pool()).append(runStreamId(runId), more, { tenantId: TENANT, expectedVersion: events.length });
    expect(await heardUntilMarker()).toEqual([runId]);
  });

  it('names every new run of a batch of several (their rows plain INSERTs, one notification)', async () => {
    await heardUntilMarker();
    const [one, two] = [history(), history()];
    await createApiLedger(db.pool()).transaction((tx) =>
      tx.appendMany([one, two].map(({ runId, events }) => newRunAppend(TENANT, runId, events, { actor: 'test' }))),
    );
    expect(await heardUntilMarker()).toEqual([one.runId, two.runId]);
    const { rows } = await db.pool().query('select run_id from runs where run_id = any($1) order by run_id', [[one.runId, two.runId]]);
    expect(rows.map((r) => r.run_id)).toEqual([one.runId, two.runId].sort());
  });

  it('says nothing, and leaves no row, when the transaction rolls back', async () => {
    await heardUntilMarker();
    const { runId, events } = history();
    await expect(
      createApiLedger(db.pool()).transaction(async (tx) => {
        await createRun(tx, TENANT, runId, events, { actor: 'test' });
        throw new Error('later work failed');
      }),
    ).rejects.toThrow('later work failed');
    expect(await heardUntilMarker()).toEqual([]);
    expect((await db.pool().query('select 1 from runs where run_id = $1', [runId])).rowCount).toBe(0);
  });
});
