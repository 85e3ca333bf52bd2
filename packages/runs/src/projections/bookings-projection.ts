import type pg from 'pg';
import type { BookingStatus } from '@ito/contracts';
import type { Booking } from '@ito/domain';
import type { InlineProjection, StoredEventOf } from '@ito/ledger';

/** The events of a booking stream (`booking-<id>`), as the desk reports them. */
export interface BookingEventMap {
  /** The domain's Booking as the desk reports it, the term as ISO instants; the stream names the tenant. */
  BookingRecorded: Omit<Booking, 'tenant_id' | 'term_start' | 'term_end'> & { term_start: string; term_end: string };
  BookingStatusChanged: { booking_id: string; status: BookingStatus; reason: string };
}

export const BOOKING_EVENT_TYPES = ['BookingRecorded', 'BookingStatusChanged'] as const;

/**
 * A booking as its BookingRecorded records it: every field of the domain's Booking but the tenant (the stream
 * names it), the term as ISO instants. The one list of a booking's fields outside SQL: the operator's command
 * records it, the API's view shows it.
 */
export function bookingRecord(b: Booking): BookingEventMap['BookingRecorded'] {
  return {
    booking_id: b.booking_id,
    status: b.status,
    gpu: b.gpu,
    nodes: b.nodes,
    gpus_per_node: b.gpus_per_node,
    region: b.region,
    fabric: b.fabric,
    term_start: b.term_start.toISOString(),
    term_end: b.term_end.toISOString(),
    rate_usd_per_gpu_hour: b.rate_usd_per_gpu_hour,
    node_inventory: b.node_inventory,
  };
}

export function bookingStreamId(bookingId: string): string {
  return `booking-${bookingId}`;
}

/** The bookings table, kept in the append transaction; rebuildable from position 0. */
export const bookingsProjection: InlineProjection<BookingEventMap> & { reset(client: pg.PoolClient): Promise<void> } = {
  name: 'bookings',
  handles: [...BOOKING_EVENT_TYPES],
  async apply(client, events) {
    // A status change only ever moves a row to a later version, so of a batch's changes to one booking only the
    // latest can show: one UPDATE per booking instead of one per event (what makes a rebuild fast).
    const latest = new Map<string, StoredEventOf<BookingEventMap>>();
    for (const event of events) {
      if (event.type === 'BookingRecorded') await applyOne(client, event);
      else if (event.type === 'BookingStatusChanged') {
        const id = event.data.booking_id;
        const seen = latest.get(id);
        if (!seen || seen.streamVersion < event.streamVersion) latest.set(id, event);
      }
    }
    for (const event of latest.values()) await applyOne(client, event);
  },
  async reset(client) {
    await client.query('delete from bookings');
  },
};

async function applyOne(client: pg.PoolClient, event: StoredEventOf<BookingEventMap>): Promise<void> {
  if (event.type === 'BookingRecorded') {
    const d = event.data;
    await client.query(
      `insert into bookings (booking_id, tenant_id, status, gpu, nodes, gpus_per_node, region, fabric, term_start, term_end,
         rate_usd_per_gpu_hour, node_inventory, version, updated_at)
       values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)
       on conflict (booking_id) do nothing`,
      [d.booking_id, event.tenantId, d.status, d.gpu, d.nodes, d.gpus_per_node, d.region, d.fabric, d.term_start, d.term_end,
        d.rate_usd_per_gpu_hour, JSON.stringify(d.node_inventory), event.streamVersion, event.recordedAt],
    );
  } else if (event.type === 'BookingStatusChanged') {
    const d = event.data;
    await client.query('update bookings set status = $2, version = $3, updated_at = $4 where booking_id = $1 and version < $3', [
      d.booking_id,
      d.status,
      event.streamVersion,
      event.recordedAt,
    ]);
  }
}
