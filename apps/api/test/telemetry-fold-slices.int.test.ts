import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '@ito/ledger';
import { emptyRunTelemetry } from '@ito/telemetry';
import { telemetryProjection } from '../src/projections/telemetry-projection.js';
import { usePool } from '../../../test/support/db.js';
import { RUN_HISTORY, T0 } from '../../../packages/telemetry/test/support/known-history.js';

const db = usePool(2);

/** The hand-built run's history, for `runs` runs, one after another in the batch. */
function batchOf(runs: number): StoredEvent[] {
  const out: StoredEvent[] = [];
  for (let r = 0; r < runs; r++) {
    const runId = `run_${String(r).padStart(32, '0')}`;
    for (const [s, type, data] of RUN_HISTORY) {
      out.push({ position: out.length + 1, streamId: '', streamVersion: 0, tenantId: '', type, schemaVersion: 1, data: { ...data, run_id: runId }, metadata: {}, recordedAt: new Date(T0 + s * 1000), transactionId: '' } as StoredEvent);
    }
  }
  return out;
}

describe('the telemetry fold during a catch-up', () => {
  it('lets the event loop in while it folds a large batch, so the batch before it can go on being written', async () => {
    const events = batchOf(2_000);
    // Every run's kept state is carried: the fold reads nothing, so any turn of the loop during it is its own yield.
    const carried = new Map([...new Set(events.map((e) => (e.data as { run_id: string }).run_id))].map((id) => [id, JSON.stringify(emptyRunTelemetry(id))]));
    let turns = 0;
    let folding = true;
    const tick = () => {
      turns++;
      if (folding) setImmediate(tick);
    };
    setImmediate(tick);
    const folded = await telemetryProjection.fold!(db.pool(), events as never, carried);
    folding = false;
    expect(folded).not.toBeNull();
    // Folding 2,000 runs takes tens of milliseconds: a thread held for all of it would show one turn at most.
    expect(turns).toBeGreaterThan(3);
  });
});
