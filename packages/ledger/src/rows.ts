import type { EventMetadata, StoredEvent, Upcaster } from './types.js';

/**
 * The columns every event query selects, in the shape `toStoredEvent` reads. `recorded_at` comes as epoch
 * milliseconds: the same instant node-pg's text parse of the timestamp gives, without its regular expression (a
 * tenth of a projection catch-up's read in the process). In float8 throughout, rounded: the column keeps whole
 * milliseconds, which the float8 seconds × 1000 miss by far less than half of one; `extract`'s numeric would be
 * exact too but costs PostgreSQL twice the timestamp's text output, the float8 a little less than it.
 */
export const EVENT_COLUMNS = `position::text as position, stream_id, stream_version, tenant_id, type, schema_version, data,
  metadata, round(date_part('epoch', recorded_at) * 1000) as recorded_ms, transaction_id::text as transaction_id`;

/**
 * What a projection that reads only payloads selects (`AsyncProjection.payloadsOnly`): half the columns, and the
 * half node-pg spends most on per row (strings and the metadata's JSON).
 */
export const PAYLOAD_COLUMNS = `position::text as position, type, schema_version, data, round(date_part('epoch', recorded_at) * 1000) as recorded_ms`;

/** The fields a payload-only read leaves out, as the events it hands over carry them. */
const NO_METADATA: EventMetadata = Object.freeze({}) as EventMetadata;

export function toPayloadEvent(row: Pick<EventRow, 'position' | 'type' | 'schema_version' | 'data' | 'recorded_ms'>): StoredEvent {
  return { position: Number(row.position), streamId: '', streamVersion: 0, tenantId: '', type: row.type, schemaVersion: row.schema_version, data: row.data, metadata: NO_METADATA, recordedAt: new Date(row.recorded_ms), transactionId: '' };
}

export interface EventRow {
  position: string;
  stream_id: string;
  stream_version: number;
  tenant_id: string;
  type: string;
  schema_version: number;
  data: Record<string, unknown>;
  metadata: EventMetadata;
  recorded_ms: number;
  transaction_id: string;
}

export function toStoredEvent(row: EventRow): StoredEvent {
  return {
    position: Number(row.position),
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    tenantId: row.tenant_id,
    type: row.type,
    schemaVersion: row.schema_version,
    data: row.data,
    metadata: row.metadata,
    recordedAt: new Date(row.recorded_ms),
    transactionId: row.transaction_id,
  };
}

/**
 * Lifts stored events to the newest shape the registered upcasters know, one version at a time.
 * The stored row is untouched; only the value handed to the reader changes.
 */
export class Upcasters {
  private readonly byKey = new Map<string, Upcaster>();

  constructor(list: Upcaster[] = []) {
    for (const u of list) {
      const key = Upcasters.key(u.type, u.fromVersion);
      if (this.byKey.has(key)) throw new Error(`two upcasters for ${u.type} from version ${u.fromVersion}`);
      this.byKey.set(key, u);
    }
  }

  apply(event: StoredEvent): StoredEvent {
    if (this.byKey.size === 0) return event;
    let { data, schemaVersion } = event;
    for (let u = this.byKey.get(Upcasters.key(event.type, schemaVersion)); u; u = this.byKey.get(Upcasters.key(event.type, schemaVersion))) {
      data = u.upcast(data);
      schemaVersion += 1;
    }
    return schemaVersion === event.schemaVersion ? event : { ...event, data, schemaVersion };
  }

  private static key(type: string, version: number): string {
    return `${type}\u0000${version}`;
  }
}
