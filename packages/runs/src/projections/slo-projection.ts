import type pg from 'pg';
import type { RunEventMap, SloName } from '@ito/domain';
import type { InlineProjection, StoredEventOf } from '@ito/ledger';

/** Upper bounds of the SLO histograms' buckets, in seconds: they bracket the default targets and the seed's bounds. */
/** The events the SLO counts are made of. */
type SloEvents = Pick<RunEventMap, 'RunResumed' | 'SloBreached'>;

export const SLO_BUCKETS = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 900] as const;

/** The bucket a latency counts in: the index of the first bound it does not exceed, SLO_BUCKETS.length for +Inf. */
export function sloBucketOf(seconds: number): number {
  const i = SLO_BUCKETS.findIndex((b) => seconds <= b);
  return i < 0 ? SLO_BUCKETS.length : i;
}

async function countLatency(client: pg.PoolClient, e: StoredEventOf<SloEvents>, latency: SloName, kind: string, seconds: number | undefined): Promise<void> {
  if (seconds === undefined || !Number.isFinite(seconds)) return;
  await client.query({
    name: 'ito_slo_latency_count',
    text: `insert into slo_latency_counts (tenant_id, latency, incident_kind, bucket, count, sum_s) values ($1,$2,$3,$4,1,$5)
           on conflict (tenant_id, latency, incident_kind, bucket) do update set count = slo_latency_counts.count + 1, sum_s = slo_latency_counts.sum_s + excluded.sum_s`,
    values: [e.tenantId, latency, kind, sloBucketOf(seconds), seconds],
  });
}

/**
 * The SLO histograms and breach counts, kept in the append transaction: each `RunResumed` with an incident counts
 * its detection and resume latency in their buckets, each `SloBreached` counts once. Counts, not rows per incident,
 * so /metrics reads a few rows whatever the history; a replay in ledger order adds up to the same counts and sums.
 */
export const sloProjection: InlineProjection<SloEvents> & { reset(client: pg.PoolClient): Promise<void> } = {
  name: 'slo',
  handles: ['RunResumed', 'SloBreached'],
  async apply(client, events) {
    for (const e of events) {
      if (e.type === 'RunResumed') {
        const d = e.data;
        if (!d.incident) continue;
        await countLatency(client, e, 'detection', d.incident.kind, d.detection_latency_s);
        await countLatency(client, e, 'resume', d.incident.kind, d.resume_latency_s);
      } else {
        const d = e.data;
        await client.query({
          name: 'ito_slo_breach_count',
          text: `insert into slo_breach_counts (tenant_id, slo, bound, count) values ($1,$2,$3,1)
                 on conflict (tenant_id, slo, bound) do update set count = slo_breach_counts.count + 1`,
          values: [e.tenantId, d.slo, d.bound],
        });
      }
    }
  },
  async reset(client) {
    await client.query('delete from slo_latency_counts');
    await client.query('delete from slo_breach_counts');
  },
};
