// The audit record's shape, apart from the walk over records, so the link rules can name it without importing
// the walk that uses them.

/** The stored fields of an event, as an audit record carries them (recorded_at as an ISO instant). */
export interface AuditEventBody {
  stream_id: string;
  stream_version: number;
  type: string;
  schema_version: number;
  data: unknown;
  metadata: unknown;
  recorded_at: string;
}

/**
 * One link of a tenant's chain with the event it seals, as the audit route serves it and an export holds it.
 * `event` is null when the link names a position whose event is no longer in the table.
 */
export interface AuditRecord {
  tenant_seq: number;
  position: number;
  prev_hash: string | null;
  hash: string;
  event: AuditEventBody | null;
}
