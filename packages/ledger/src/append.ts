import type pg from 'pg';
import { statementFor } from './append-sql.js';
import { VersionConflictError } from './errors.js';
import { contentHash } from './hashing.js';
import type { AppendOptions, AppendResult, NewEvent, StoredEvent } from './types.js';
import { validateAppend } from './validate.js';

export interface PreparedEvent {
  type: string;
  schemaVersion: number;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  contentHash: string;
}

/** Stored precision is milliseconds, so the hash is computed over the value that will be read back. */
export function storedInstant(recordedAt: Date): Date {
  return new Date(Math.floor(recordedAt.getTime()));
}

/** One event as it will be stored, with the JSON texts its data and metadata were normalised through. */
interface PreparedWithTexts {
  event: PreparedEvent;
  dataJson: string;
  metadataJson: string;
}

function prepareEvent(streamId: string, tenantId: string, e: NewEvent, at: Date): PreparedWithTexts {
  // Normalise through JSON once so the stored jsonb and the hashed value are the same value; the texts are what
  // a one-event append sends, so they are not written a second time.
  const dataJson = JSON.stringify(e.data);
  const metadataJson = JSON.stringify(e.metadata ?? {});
  const data = JSON.parse(dataJson) as Record<string, unknown>;
  const metadata = JSON.parse(metadataJson) as Record<string, unknown>;
  const schemaVersion = e.schemaVersion ?? 1;
  const hash = contentHash({ tenantId, streamId, type: e.type, schemaVersion, data, metadata, recordedAt: at });
  return { event: { type: e.type, schemaVersion, data, metadata, contentHash: hash }, dataJson, metadataJson };
}

/** Each event as it will be stored (data and metadata normalised through JSON once), with its content hash. */
export function prepareEvents(streamId: string, tenantId: string, events: readonly NewEvent[], at: Date): PreparedEvent[] {
  return events.map((e) => prepareEvent(streamId, tenantId, e, at).event);
}

/** What was written, in stream order, from the rows the INSERT returned for one stream. */
export function storedFrom(
  streamId: string,
  tenantId: string,
  prepared: readonly PreparedEvent[],
  rows: Array<{ position: string; stream_version: number; transaction_id: string }>,
  at: Date,
): AppendResult {
  rows.sort((a, b) => a.stream_version - b.stream_version);
  const stored: StoredEvent[] = rows.map((row, i) => {
    const p = prepared[i] as PreparedEvent;
    return {
      position: Number(row.position),
      streamId,
      streamVersion: row.stream_version,
      tenantId,
      type: p.type,
      schemaVersion: p.schemaVersion,
      data: p.data,
      metadata: p.metadata,
      recordedAt: at,
      transactionId: row.transaction_id,
    };
  });
  return { nextExpectedVersion: (stored[stored.length - 1] as StoredEvent).streamVersion, events: stored };
}

/** Appends in one statement on `db` (a pool for autocommit, or a client inside a transaction). */
export async function appendEvents(
  db: pg.Pool | pg.PoolClient,
  streamId: string,
  events: readonly NewEvent[],
  opts: AppendOptions,
  recordedAt: Date,
): Promise<AppendResult> {
  validateAppend(streamId, events, opts);
  const at = storedInstant(recordedAt);
  const statement = statementFor(opts.expectedVersion, events.length);
  let prepared: PreparedEvent[];
  let values: unknown[];
  if (events.length === 1) {
    // The one-event statement's parameters, in their order (append-sql.ts).
    const { event, dataJson, metadataJson } = prepareEvent(streamId, opts.tenantId, events[0]!, at);
    prepared = [event];
    values = [streamId, opts.tenantId, event.type, event.schemaVersion, dataJson, metadataJson, at.toISOString(), event.contentHash];
  } else {
    prepared = prepareEvents(streamId, opts.tenantId, events, at);
    values = [streamId, opts.tenantId, JSON.stringify(prepared), at.toISOString()];
  }
  if (statement.exact !== null) values.push(statement.exact);

  let rows: Array<{ position: string; stream_version: number; transaction_id: string }>;
  try {
    ({ rows } = await db.query({ name: statement.name, text: statement.text, values }));
  } catch (err) {
    if (isUniqueViolation(err, 'events_stream_version_uq')) {
      throw new VersionConflictError(streamId, opts.expectedVersion, await currentVersion(db, streamId, opts.tenantId));
    }
    throw err;
  }
  if (rows.length === 0) throw new VersionConflictError(streamId, opts.expectedVersion, await currentVersion(db, streamId, opts.tenantId));
  return storedFrom(streamId, opts.tenantId, prepared, rows, at);
}

/** Only on the failure path, to say in the error where the stream actually is. */
export async function currentVersion(db: pg.Pool | pg.PoolClient, streamId: string, tenantId: string): Promise<number | null> {
  try {
    const { rows } = await db.query<{ v: number | null }>(// Scoped to the tenant: another tenant's stream reads as absent, never as its version.
      'select max(stream_version) as v from events where stream_id = $1 and tenant_id = $2',
      [streamId, tenantId],);
    return rows[0]?.v ?? 0;
  } catch {
    // Inside an aborted transaction the diagnosis is not worth a second error.
    return null;
  }
}

export function isUniqueViolation(err: unknown, constraint: string): boolean {
  const e = err as { code?: string; constraint?: string };
  return e?.code === '23505' && e.constraint === constraint;
}
