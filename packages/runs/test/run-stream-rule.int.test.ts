import { describe, expect, it } from 'vitest';
import { decideNodeFailure, runStreamId, type NodeFailure, type RunEvent } from '@ito/domain';
import { appendRunEvents, createApiLedger, createRun, getRun } from '@ito/runs';
import { usePool } from '../../ledger/test/harness.js';
import { NODES, RUN, fold, planned, started } from '../../domain/test/support/run-history.js';

/**
 * The run streams' rule holds whoever appends: the run writer, the train gate, or code that calls the ledger itself.
 * A direct append to a run stream cannot skip the SLO rule (its late incident gets its SloBreached all the same)
 * nor put anything but run events in the stream. With the rule taken off the run ledger, these tests fail.
 */
const db = usePool(4);
const TENANT = `ten_${'2'.repeat(32)}`;
const SETTINGS = { interval_s: 2, misses: 3, hang_factor: 5, first_step_max_s: 600 };
const T = (s: number) => new Date(Date.UTC(2026, 11, 3, 12, 0, 0) + s * 1000);
let runs = 0;

/** The domain's running history (pretrain started on two nodes), under a run id and idempotency key of its own. */
function runningHistory(): { runId: string; history: RunEvent[] } {
  runs += 1;
  const runId = `run_${runs.toString(16).padStart(32, 'c')}`;
  const history = JSON.parse(JSON.stringify(started(planned(), 'pretrain')).replaceAll(RUN, runId)) as RunEvent[];
  const reserve = history[0]!;
  if (reserve.type === 'RunReserved') reserve.data.idempotency_key = runId;
  return { runId, history };
}

/** A node silent since T(0), found lost 700 s later: past every detection target (the seed's bound is 600 s). */
function lateLoss(history: RunEvent[]): RunEvent[] {
  const start = history.findLast((e) => e.type === 'StageStarted');
  const task = start?.type === 'StageStarted' ? start.data.tasks?.find((t) => t.node_id === NODES[1]) : undefined;
  const failure: NodeFailure = {
    node_id: NODES[1]!,
    task_id: task!.task_id,
    attempt: 1,
    verdict: { kind: 'lost', silent_s: 700 },
    last_heartbeat_at: T(0),
    step: null,
    detected_at: T(700),
  };
  const events = decideNodeFailure(fold(history), failure, SETTINGS);
  expect(events.map((e) => e.type)).toContain('NodeLost');
  return events;
}

async function startRun(): Promise<{ runId: string; history: RunEvent[] }> {
  const started = runningHistory();
  await createApiLedger(db.pool()).transaction((tx) => createRun(tx, TENANT, started.runId, started.history, { actor: 'test' }));
  return started;
}

async function streamTypes(runId: string): Promise<string[]> {
  return (await createApiLedger(db.pool()).readStream(runStreamId(runId), { tenantId: TENANT })).map((e) => e.type);
}

async function breachCount(): Promise<number> {
  const { rows } = await db.pool().query<{ n: number }>(`select coalesce(sum(count), 0)::int as n from slo_breach_counts where slo = 'detection'`);
  return rows[0]!.n;
}

describe('the run streams rule', () => {
  it('gives a late incident its SloBreached when the events are appended straight to the run stream, past the writer', async () => {
    const { runId, history } = await startRun();
    const before = await breachCount();
    const loss = lateLoss(history);
    await createApiLedger(db.pool()).append(runStreamId(runId), loss.map((e) => ({ ...e, metadata: { actor: 'bypass' } })), { tenantId: TENANT, expectedVersion: 'any' });
    const types = await streamTypes(runId);
    expect(types.slice(history.length)).toEqual([...loss.map((e) => e.type), 'SloBreached']);
    // The projections saw it as well: the breach is counted, the run's row holds the whole stream.
    expect(await breachCount()).toBe(before + 1);
    expect((await getRun(db.pool(), TENANT, runId))!.version).toBe(types.length);
  });

  it('does the same inside a transaction that appends with tx.append', async () => {
    const { runId, history } = await startRun();
    const loss = lateLoss(history);
    await createApiLedger(db.pool()).transaction((tx) => tx.append(runStreamId(runId), loss, { tenantId: TENANT, expectedVersion: history.length }));
    expect((await streamTypes(runId)).at(-1)).toBe('SloBreached');
  });

  it('is what the run writer relies on: appendRunEvents returns the breach it was not handed', async () => {
    const { runId, history } = await startRun();
    const loss = lateLoss(history);
    const written = await createApiLedger(db.pool()).transaction(async (tx) => {
      const run = (await getRun(tx.client, TENANT, runId, { forUpdate: true }))!;
      return appendRunEvents(tx, run, loss, { actor: 'test' });
    });
    expect(written.map((e) => e.type)).toEqual([...loss.map((e) => e.type), 'SloBreached']);
    expect(written.at(-1)!.data).toMatchObject({ run_id: runId, slo: 'detection', measured_s: 700 });
  });

  it('holds for a multi-stream append too: the run stream gets its SloBreached, the other stream its events, in one statement', async () => {
    const { runId, history } = await startRun();
    const before = await breachCount();
    const loss = lateLoss(history);
    const other = `cfm-rule-${runId}`;
    const [, run] = await createApiLedger(db.pool()).transaction((tx) =>
      tx.appendMany([
        { streamId: other, events: [{ type: 'ConfirmationConsumed', data: { ref: other, consumed_for: runId } }], opts: { tenantId: TENANT, expectedVersion: 'no_stream' } },
        { streamId: runStreamId(runId), events: loss.map((e) => ({ ...e, metadata: { actor: 'many' } })), opts: { tenantId: TENANT, expectedVersion: history.length } },
      ]),
    );
    expect(run.events.map((e) => e.type)).toEqual([...loss.map((e) => e.type), 'SloBreached']);
    expect((await streamTypes(runId)).slice(history.length)).toEqual([...loss.map((e) => e.type), 'SloBreached']);
    expect(await breachCount()).toBe(before + 1);
    expect((await getRun(db.pool(), TENANT, runId))!.version).toBe(history.length + loss.length + 1);
  });

  it('refuses a stranger in the run stream of a multi-stream append, and writes nothing of any of its streams', async () => {
    const { runId, history } = await startRun();
    const other = `cfm-rule-${runId}`;
    const stranger = { type: 'BookingRecorded', data: { booking_id: `bkg_${'9'.repeat(32)}` } };
    await expect(
      createApiLedger(db.pool()).appendMany([
        { streamId: other, events: [{ type: 'ConfirmationConsumed', data: { ref: other, consumed_for: runId } }], opts: { tenantId: TENANT, expectedVersion: 'no_stream' } },
        { streamId: runStreamId(runId), events: [stranger], opts: { tenantId: TENANT, expectedVersion: 'any' } },
      ]),
    ).rejects.toMatchObject({ code: 'validation_failed' });
    expect(await streamTypes(runId)).toHaveLength(history.length);
    expect(await createApiLedger(db.pool()).readStream(other)).toEqual([]);
  });

  it('refuses an event that is not a run event, and writes nothing of the append', async () => {
    const { runId, history } = await startRun();
    const stranger = { type: 'BookingRecorded', data: { booking_id: `bkg_${'9'.repeat(32)}` } };
    const progress = { type: 'ProgressRecorded', data: { run_id: runId, stage: 'pretrain', step: 1, tokens: 1, loss: 1 } };
    await expect(
      createApiLedger(db.pool()).append(runStreamId(runId), [progress, stranger], { tenantId: TENANT, expectedVersion: 'any' }),
    ).rejects.toMatchObject({ code: 'validation_failed' });
    expect(await streamTypes(runId)).toHaveLength(history.length);
    expect((await getRun(db.pool(), TENANT, runId))!.version).toBe(history.length);
  });
});
