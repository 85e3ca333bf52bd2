import type pg from 'pg';
import type { Rendezvous, RunState } from '@ito/contracts';
import { isId } from './ids.js';
import { DEFAULT_TENANT_POLICY, MAX_FAILED_USES, normalizeRunAggregate, type Booking, type ConfirmationRecord, type RunAggregate, type RunEventMap, type TenantPolicy } from '@ito/domain';

/**
 * Query functions take the client first and name the tenant in every WHERE: tenant isolation lives here.
 * Another tenant's row is simply not found.
 */
type Db = pg.Pool | pg.PoolClient;

/** A bookings row is the domain's Booking, column for column. */
type BookingRow = Booking;

const BOOKING_COLUMNS = `booking_id, tenant_id, status, gpu, nodes, gpus_per_node, region, fabric, term_start, term_end,
  rate_usd_per_gpu_hour, node_inventory`;

export async function getBooking(db: Db, tenantId: string, bookingId: string): Promise<Booking | null> {
  if (!isId('bkg', bookingId)) return null;
  const { rows } = await db.query<BookingRow>(`select ${BOOKING_COLUMNS} from bookings where tenant_id = $1 and booking_id = $2`, [tenantId, bookingId]);
  return rows[0] ?? null;
}

export async function listBookings(db: Db, tenantId: string): Promise<Booking[]> {
  const { rows } = await db.query<BookingRow>(`select ${BOOKING_COLUMNS} from bookings where tenant_id = $1 order by term_start desc, booking_id`, [tenantId]);
  return rows;
}

export async function getTenantPolicy(db: Db, tenantId: string): Promise<TenantPolicy> {
  const { rows } = await db.query<{ policy: Partial<TenantPolicy> }>('select policy from tenants where tenant_id = $1', [tenantId]);
  return { ...DEFAULT_TENANT_POLICY, ...(rows[0]?.policy ?? {}) };
}

/** A runs row: what RunReserved recorded, plus the folded state. */
export interface RunRow
  extends Pick<
    RunEventMap['RunReserved'],
    'run_id' | 'tenant_id' | 'booking_id' | 'manifest_digest' | 'idempotency_key' | 'confirmation_ref' | 'estimated_cost_usd' | 'incremental_cost_usd' | 'plan'
  > {
  state: RunState;
  stage: string | null;
  aggregate: RunAggregate;
  version: number;
  created_at: Date;
  updated_at: Date;
}

export async function getRun(db: Db, tenantId: string, runId: string, opts: { forUpdate?: boolean } = {}): Promise<RunRow | null> {
  if (!isId('run', runId)) return null;
  const { rows } = await db.query<RunRow>({
    name: opts.forUpdate ? 'ito_run_get_for_update' : 'ito_run_get',
    text: `select * from runs where tenant_id = $1 and run_id = $2${opts.forUpdate ? ' for update' : ''}`,
    values: [tenantId, runId],
  });
  const row = rows[0];
  return row ? { ...row, aggregate: normalizeRunAggregate(row.aggregate) } : null;
}

export async function listRuns(db: Db, tenantId: string, filter: { idempotencyKey?: string | undefined; limit: number }): Promise<RunRow[]> {
  if (filter.idempotencyKey !== undefined) {
    const { rows } = await db.query<RunRow>('select * from runs where tenant_id = $1 and idempotency_key = $2', [tenantId, filter.idempotencyKey]);
    return rows;
  }
  const { rows } = await db.query<RunRow>('select * from runs where tenant_id = $1 order by created_at desc, run_id limit $2', [tenantId, filter.limit]);
  return rows;
}

/** A confirmations row: the domain's record plus what the API keeps about its life. */
export interface ConfirmationRow extends ConfirmationRecord {
  created_at: Date;
  requested_by: string;
  requested_by_principal: string | null;
  decided_by: string | null;
  decided_by_principal: string | null;
  decided_at: Date | null;
  consumed_at: Date | null;
  consumed_for: string | null;
  details: Record<string, unknown>;
}

export type StoredConfirmation = ConfirmationRow;

export async function getConfirmation(db: Db, tenantId: string, ref: string, opts: { forUpdate?: boolean } = {}): Promise<StoredConfirmation | null> {
  if (!isId('cfm', ref)) return null;
  const { rows } = await db.query<ConfirmationRow>(`select * from confirmations where tenant_id = $1 and ref = $2${opts.forUpdate ? ' for update' : ''}`, [
    tenantId,
    ref,
  ]);
  return rows[0] ?? null;
}

/** Counts a refused use. Runs outside the refused transaction, so the count survives its rollback. */
export async function recordFailedConfirmationUse(db: Db, tenantId: string, ref: string): Promise<void> {
  await db.query('update confirmations set failed_uses = failed_uses + 1 where tenant_id = $1 and ref = $2 and status <> $3', [tenantId, ref, 'consumed']);
}

/**
 * Consumes a confirmation: the ONE conditional UPDATE that makes it single-use. Concurrent callers serialise on
 * the row; the loser re-evaluates the WHERE after the winner commits and gets no row.
 */
export async function consumeConfirmation(db: Db, tenantId: string, ref: string, consumedFor: string, now: Date): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'ito_confirmation_consume',
    text: `update confirmations set status = 'consumed', consumed_at = $3, consumed_for = $4
      where tenant_id = $1 and ref = $2 and status = 'approved' and expires_at > $3 and failed_uses < $5`,
    values: [tenantId, ref, now, consumedFor, MAX_FAILED_USES],
  });
  return rowCount === 1;
}

/** The manifest bytes stored under a digest, or null. */
export async function getManifestBody(db: Db, tenantId: string, digest: string): Promise<string | null> {
  const { rows } = await db.query<{ body: string }>('select body from manifests where tenant_id = $1 and digest = $2', [tenantId, digest]);
  return rows[0]?.body ?? null;
}

export async function saveManifest(db: Db, tenantId: string, digest: string, body: string): Promise<void> {
  await db.query('insert into manifests (tenant_id, digest, body) values ($1, $2, $3) on conflict (tenant_id, digest) do nothing', [tenantId, digest, body]);
}

/**
 * Every confirmations column, but of `details` only the one member train reads: the rest (the plan the
 * approver saw, kilobytes) would be decompressed, serialised and parsed on every train for nothing.
 */
const TRAIN_CONFIRMATION_COLUMNS = `ref, tenant_id, action, booking_id, run_id, manifest_digest, cost_usd, max_incremental_cost_usd, status,
  requested_by, requested_by_principal, decided_by, decided_by_principal, decided_at, consumed_at, consumed_for, failed_uses, created_at, expires_at,
  case when details ? 'eligibility' then jsonb_build_object('eligibility', details->'eligibility') else '{}'::jsonb end as details`;

/**
 * The three reads the train gates need (booking, tenant policy, confirmation) in one round trip; each is null
 * when absent or another tenant's. Timestamps come back from row_to_json as text and are revived here. The
 * confirmation's `details` holds only `eligibility` (when it has one).
 */
export async function getTrainContext(
  db: Db,
  tenantId: string,
  bookingId: string,
  ref: string,
): Promise<{ booking: Booking | null; policy: TenantPolicy; confirmation: StoredConfirmation | null }> {
  const { rows } = await db.query<{ booking: BookingRow | null; policy: Partial<TenantPolicy> | null; confirmation: ConfirmationRow | null }>({
    name: 'ito_train_context',
    text: `select
       (select row_to_json(b) from (select ${BOOKING_COLUMNS} from bookings where tenant_id = $1 and booking_id = $2) b) as booking,
       (select policy from tenants where tenant_id = $1) as policy,
       (select row_to_json(c) from (select ${TRAIN_CONFIRMATION_COLUMNS} from confirmations where tenant_id = $1 and ref = $3) c) as confirmation`,
    values: [tenantId, bookingId, ref],
  });
  const row = rows[0]!;
  const b = row.booking;
  const c = row.confirmation;
  return {
    booking: b ? { ...b, term_start: new Date(b.term_start), term_end: new Date(b.term_end) } : null,
    policy: { ...DEFAULT_TENANT_POLICY, ...(row.policy ?? {}) },
    confirmation: c
      ? {
          ...c,
          expires_at: new Date(c.expires_at),
          created_at: new Date(c.created_at),
          decided_at: c.decided_at ? new Date(c.decided_at) : null,
          consumed_at: c.consumed_at ? new Date(c.consumed_at) : null,
        }
      : null,
  };
}

/**
 * The booking's nodes that can take a task now: registered to this booking, not revoked, heard from within
 * `aliveWithinMs` (the liveness table, or the registration before the first beat), not among `excluded` (the
 * nodes the run declared lost, hung or faulty), and running no other run's task. Ordered by name, so ranks are
 * stable across attempts.
 */
export async function freeLiveNodes(
  db: Db,
  tenantId: string,
  bookingId: string,
  runId: string,
  since: Date,
  excluded: readonly string[] = [],
): Promise<Array<{ node_id: string; name: string; rendezvous: Rendezvous | null }>> {
  const { rows } = await db.query<{ node_id: string; name: string; rendezvous: Rendezvous | null }>({
    name: 'ito_free_live_nodes',
    text: `select n.node_id, n.name, n.agent->'rendezvous' as rendezvous from nodes n left join node_liveness l on l.node_id = n.node_id
           where n.tenant_id = $1 and n.booking_id = $2 and n.revoked_at is null
             and greatest(l.last_heartbeat_at, n.last_heartbeat_at) >= $4
             and n.node_id <> all($5::text[])
             and not exists (select 1 from tasks t where t.node_id = n.node_id and t.run_id <> $3 and t.status in ('assigned', 'running'))
           order by n.name, n.node_id`,
    values: [tenantId, bookingId, runId, since, excluded],
  });
  return rows;
}

/**
 * The booking's node count and how many of its nodes were heard from since `since` (the liveness table, or the
 * registration before the first beat), busy or not: what `status` and `train` tell a person about nodes.
 */
export async function bookingNodeLiveness(db: Db, tenantId: string, bookingId: string, since: Date): Promise<{ needed: number; live: number } | null> {
  const { rows } = await db.query<{ needed: number; live: number }>(
    `select b.nodes as needed,
            (select count(*)::int from nodes n left join node_liveness l on l.node_id = n.node_id
              where n.tenant_id = $1 and n.booking_id = $2 and n.revoked_at is null
                and greatest(l.last_heartbeat_at, n.last_heartbeat_at) >= $3) as live
       from bookings b where b.tenant_id = $1 and b.booking_id = $2`,
    [tenantId, bookingId, since],
  );
  return rows[0] ?? null;
}
