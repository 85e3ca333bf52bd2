import type pg from 'pg';
import type { RunEventMap } from '@ito/domain';
import type { InlineProjection } from '@ito/ledger';

/**
 * The SLO records, kept in the append transaction: one row per incident a run resumed from (`RunResumed` with its
 * incident) and one per `SloBreached`. Keyed by the event's position, so a replay writes the same rows. /metrics
 * aggregates these small tables at scrape time: every API replica answers the same, and a restart loses nothing.
 */
export const sloProjection: InlineProjection & { reset(client: pg.PoolClient): Promise<void> } = {
  name: 'slo',
  handles: ['RunResumed', 'SloBreached'],
  async apply(client, events) {
    for (const e of events) {
      if (e.type === 'RunResumed') {
        const d = e.data as unknown as RunEventMap['RunResumed'];
        if (!d.incident) continue;
        await client.query(
          `insert into slo_incidents (position, tenant_id, run_id, incident_kind, node_id, detected_at, detection_s, resume_s)
           values ($1,$2,$3,$4,$5,$6,$7,$8) on conflict (position) do nothing`,
          [e.position, e.tenantId, d.run_id, d.incident.kind, d.incident.node_id, d.incident.detected_at, d.detection_latency_s ?? null, d.resume_latency_s ?? null],
        );
      } else {
        const d = e.data as unknown as RunEventMap['SloBreached'];
        await client.query(
          `insert into slo_breaches (position, tenant_id, run_id, incident_kind, slo, bound, measured_s, target_s)
           values ($1,$2,$3,$4,$5,$6,$7,$8) on conflict (position) do nothing`,
          [e.position, e.tenantId, d.run_id, d.incident_kind, d.slo, d.bound, d.measured_s, d.target_s],
        );
      }
    }
  },
  async reset(client) {
    await client.query('delete from slo_incidents');
    await client.query('delete from slo_breaches');
  },
};
