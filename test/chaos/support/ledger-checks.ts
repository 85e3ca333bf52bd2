import pg from 'pg';
import { createLedger } from '@ito/ledger';
import type { LedgerEvent } from './cluster.js';

/** What a scenario expects of its run once the chaos is over. */
export interface LedgerExpectations {
  runId: string;
  tenantId: string;
  /** The run's terminal event and the state its projection must show. */
  ends: { event: 'RunSucceeded'; state: 'succeeded' } | { event: 'RunFailed'; state: 'failed' };
  /**
   * Events the test was shown while the chaos went on (answered reads of the ledger): each must still be there,
   * at the same position and version, with the same type and data. An acknowledged event is never lost.
   */
  acknowledged: Iterable<LedgerEvent>;
}

/**
 * Everything a chaos scenario asserts afterwards, read from the ledger itself (the events table, the runs
 * projection and the hash chain), as a list of findings; an empty list means the ledger is whole:
 *
 * - no acknowledged event lost (every event read during the chaos is still there, unchanged);
 * - no run duplicated (the tenant holds exactly one run, with one creation and one terminal event);
 * - nothing recorded twice (versions 1..n without gaps, one StageCompleted per stage, one result per task, one
 *   event per agent report sequence number, one record per checkpoint);
 * - the run ended as expected, in the stream and in its projection;
 * - the audit chain verifies over every event once the sealer has caught up.
 */
export async function ledgerFindings(databaseUrl: string, expect: LedgerExpectations): Promise<string[]> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  try {
    const findings: string[] = [];
    const { rows } = await pool.query<{ position: string; stream_id: string; stream_version: number; type: string; data: any; recorded_at: Date }>(
      'select position::text, stream_id, stream_version, type, data, recorded_at from events where tenant_id = $1 order by events.position',
      [expect.tenantId],
    );
    const stream = rows
      .filter((r) => r.stream_id === `run-${expect.runId}`)
      .map((r): LedgerEvent => ({ position: Number(r.position), version: r.stream_version, type: r.type, recorded_at: r.recorded_at.toISOString(), data: r.data }));
    if (stream.length === 0) return [`the ledger holds no stream for run ${expect.runId}`];

    findings.push(...lostAcknowledged(stream, expect.acknowledged));
    findings.push(...invariantViolations(stream));

    const runStreams = new Set(rows.filter((r) => r.stream_id.startsWith('run-')).map((r) => r.stream_id));
    if (runStreams.size !== 1) findings.push(`the tenant's ledger holds ${runStreams.size} run streams, expected 1`);
    const runs = await pool.query<{ run_id: string; state: string }>('select run_id, state from runs where tenant_id = $1', [expect.tenantId]);
    if (runs.rows.length !== 1) findings.push(`the runs projection holds ${runs.rows.length} runs for the tenant, expected 1`);
    const run = runs.rows.find((r) => r.run_id === expect.runId);
    if (run?.state !== expect.ends.state) findings.push(`run state is ${run?.state ?? 'missing'}, expected ${expect.ends.state}`);

    const terminal = stream.filter((e) => e.type === 'RunSucceeded' || e.type === 'RunFailed');
    if (terminal.length !== 1 || terminal[0]!.type !== expect.ends.event) findings.push(`terminal events: [${terminal.map((e) => e.type).join(', ')}], expected [${expect.ends.event}]`);

    // The processes are still up and may append (cleanup, digests) while this seals: seal until caught up.
    const ledger = createLedger({ pool });
    let unchained = '';
    for (let i = 0; i < 10; i++) {
      await ledger.sealPending();
      const { rows } = await pool.query<{ chained: string; all: string }>('select (select count(*) from event_chain)::text as chained, (select count(*) from events)::text as all');
      unchained = rows[0]!.chained === rows[0]!.all ? '' : `the audit chain links ${rows[0]!.chained} of ${rows[0]!.all} events`;
      if (!unchained) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    if (unchained) findings.push(unchained);
    const verdict = await ledger.verify();
    if (!verdict.ok) findings.push(`audit verify failed at position ${verdict.firstBadPosition}: ${verdict.reason}`);
    return findings;
  } finally {
    await pool.end();
  }
}

function lostAcknowledged(stream: LedgerEvent[], acknowledged: Iterable<LedgerEvent>): string[] {
  const byPosition = new Map(stream.map((e) => [e.position, e]));
  const lost: string[] = [];
  for (const seen of acknowledged) {
    const now = byPosition.get(seen.position);
    if (!now || now.version !== seen.version || now.type !== seen.type || JSON.stringify(now.data) !== JSON.stringify(seen.data)) {
      lost.push(`acknowledged event lost or changed: ${seen.type} v${seen.version} at ${seen.position}`);
    }
  }
  return lost;
}

/** The stream-wide invariants: versions without gaps, nothing recorded twice, no attempt's result twice. */
export function invariantViolations(events: LedgerEvent[]): string[] {
  const problems: string[] = [];
  const bad = events.findIndex((e, i) => e.version !== i + 1);
  if (bad !== -1) problems.push(`stream versions are not 1..n in order: at index ${bad} ${events[bad]!.type} has version ${events[bad]!.version} (position ${events[bad]!.position})`);
  const seen = new Set<string>();
  for (const e of events) {
    for (const key of keysOf(e)) {
      if (seen.has(key)) problems.push(`recorded twice: ${key}`);
      seen.add(key);
    }
  }
  return problems;
}

/** The identities an event must hold alone in its stream. */
function keysOf(e: LedgerEvent): string[] {
  const d = e.data;
  switch (e.type) {
    case 'StageStarted':
    case 'StageFailed':
      return [`${e.type}:${d.stage}@${d.attempt ?? 1}`];
    // A stage's result is recorded once, whatever attempt produced it.
    case 'StageCompleted':
      return [`${e.type}:${d.stage}`];
    case 'CheckpointSaved':
      return [`${e.type}:${d.checkpoint_id}`, ...(d.seq !== undefined ? [`report:${d.task_id}:${d.seq}`] : [])];
    case 'TaskCompleted':
    case 'TaskFailed':
      return [`result:${d.task_id}`, `report:${d.task_id}:${d.seq}`];
    case 'TaskStopped':
      return [`${e.type}:${d.task_id}`, ...(d.seq !== undefined ? [`report:${d.task_id}:${d.seq}`] : [])];
    case 'ProgressRecorded':
      return d.seq !== undefined ? [`report:${d.task_id}:${d.seq}`] : [];
    case 'RunSucceeded':
    case 'RunFailed':
      return ['terminal'];
    case 'RunReserved':
      return [e.type];
    default:
      return [];
  }
}
