import type pg from 'pg';
import { z } from 'zod';
import { BOOKING_STATUSES, FLEET_SCOPE, ItoError, TENANT_SCOPES, validate, type Scope } from '@ito/contracts';
import type { Logger } from '@ito/config';
import { DEFAULT_TENANT_POLICY, MAX_FILE_PATH_LENGTH, MAX_FILE_ROOTS, isNormalisedAbsolutePath, type TenantPolicy } from '@ito/domain';
import type { Ledger } from '@ito/ledger';
import { hashSecret, newSecret } from '../credentials.js';
import { isId, newId, type IdPrefix } from '../ids.js';
import { bookingRecord, bookingStreamId } from '../projections/bookings-projection.js';
import { revokeNodeCredential } from '../node-credentials.js';
import { createApiLedger } from '../run-ledger.js';

export const REQUESTER_SCOPES: Scope[] = ['runs:read', 'runs:write'];
export const APPROVER_SCOPES: Scope[] = ['runs:read', 'confirmations:approve'];
/** The scopes that can request or decide a confirmation (`admin` holds both): their keys must name a principal. */
const REQUEST_OR_APPROVE_SCOPES: Scope[] = ['runs:write', 'confirmations:approve', 'admin'];

const tenantStream = (tenantId: string) => `tenant-${tenantId}`;

/**
 * The operator's own account: it holds the operator's credentials (fleet-wide desk figures) and their events, so
 * they are chained and audited as any tenant's are. One fixed id, created with the first operator key.
 */
export const OPERATOR_TENANT_ID = `ten_${'0'.repeat(32)}`;
/** What an operator credential may do: read the desk, fleet-wide. */
export const OPERATOR_SCOPES: Scope[] = ['desk:read', FLEET_SCOPE];

/** Who holds a key: a person's or a team's name as the operator writes it (an e-mail address fits). */
export const principalSchema = z.string().regex(/^[A-Za-z0-9._@+-]{1,128}$/, 'expected a principal: 1 to 128 letters, digits or . _ @ + -');

/** A file root: absolute and normalised (no `.`/`..`/empty segment, no trailing `/`, no `%`, NUL or control character). */
const fileRootSchema = z
  .string()
  .max(MAX_FILE_PATH_LENGTH)
  .refine(isNormalisedAbsolutePath, 'expected an absolute normalised path such as /srv/ito/acme (no . or .., no trailing /, no %, NUL or control characters)');

export const policySchema = z
  .strictObject({
    allowed_licenses: z.array(z.string().min(1).max(128)).min(1).max(256),
    max_contaminated_fraction: z.number().min(0).max(1),
    checkpoint_storage: z.strictObject({
      schemes: z.array(z.string().regex(/^[a-z][a-z0-9+.-]{0,31}$/)).min(1).max(16),
      prefixes: z.array(z.string().min(1).max(2048)).max(64),
    }),
    file_roots: z.array(fileRootSchema).max(MAX_FILE_ROOTS),
  })
  .partial();

export const createBookingSchema = z.strictObject({
  tenant_id: z.string().min(1),
  gpu: z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/),
  nodes: z.number().int().min(1).max(4096),
  gpus_per_node: z.number().int().min(1).max(64),
  region: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/),
  fabric: z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/),
  term_start: z.iso.datetime({ offset: true }),
  term_end: z.iso.datetime({ offset: true }),
  rate_usd_per_gpu_hour: z.number().positive().max(1000),
  status: z.enum(BOOKING_STATUSES).default('completed'),
  node_inventory: z.array(z.string().min(1).max(128)).max(4096).optional(),
});

/**
 * The operator's commands (tenants, keys, bookings, nodes), shared by `ito-admin` (directly on the database)
 * and any admin route. Each writes its rows and its event in one transaction; secrets are returned once and
 * stored only as hashes.
 */
export function createAdminService(deps: { pool: pg.Pool; logger?: Logger; ledger?: Ledger; now?: () => Date }) {
  const ledger = deps.ledger ?? createApiLedger(deps.pool);
  const now = deps.now ?? (() => new Date());

  async function insertKey(client: pg.PoolClient, tenantId: string, scopes: Scope[], label: string | null, principal: string | null) {
    const keyId = newId('key');
    const key = newSecret('sk');
    await client.query('insert into api_keys (key_id, tenant_id, secret_hash, scopes, label, principal) values ($1,$2,$3,$4,$5,$6)', [
      keyId,
      tenantId,
      hashSecret(key),
      scopes,
      label,
      principal,
    ]);
    return { keyId, key };
  }

  /** Ids from the operator's flags are checked before any query; a malformed one names nothing that exists. */
  const requireId = (prefix: IdPrefix, value: string, what: string): string => {
    if (typeof value !== 'string' || !isId(prefix, value)) throw new ItoError('not_found', `${what} not found (not a ${prefix}_… id)`);
    return value;
  };

  const optionalPrincipal = (value: string | undefined, what: string) => (value === undefined ? null : validate(principalSchema, value, what));
  /** A key that can request or approve names who holds it: the requester ≠ approver rule compares these names. */
  const requiredPrincipal = (value: string | undefined, what: string, flag: string) => {
    if (value === undefined) throw new ItoError('validation_failed', `${what} is required: a key that can request or approve must name who holds it (${flag} <who>)`);
    return validate(principalSchema, value, what);
  };

  return {
    /**
     * A tenant and its two keys; naming their principals makes the approver's separation hold per person too.
     * `localFileRootBase` (the embedded single-host install: `$ITO_HOME/files`) grants the tenant its own file
     * root `<base>/<tenant id>` and `file://` checkpoint storage there; otherwise it gets no file root at all.
     */
    async createTenant(input: { name: string; policy?: Partial<TenantPolicy>; requesterPrincipal?: string; approverPrincipal?: string; localFileRootBase?: string }) {
      const name = validate(z.string().min(1).max(200), input.name, 'tenant name');
      const tenantId = newId('ten');
      const base = input.localFileRootBase === undefined ? null : validate(fileRootSchema, input.localFileRootBase, 'local file root');
      const local: Partial<TenantPolicy> =
        base === null
          ? {}
          : { file_roots: [`${base === '/' ? '' : base}/${tenantId}`], checkpoint_storage: { schemes: [...DEFAULT_TENANT_POLICY.checkpoint_storage.schemes, 'file'], prefixes: [] } };
      const policy = { ...DEFAULT_TENANT_POLICY, ...local, ...validate(policySchema, input.policy ?? {}, 'tenant policy') };
      const requesterPrincipal = requiredPrincipal(input.requesterPrincipal, 'requester principal', '--requester-principal');
      const approverPrincipal = requiredPrincipal(input.approverPrincipal, 'approver principal', '--approver-principal');
      if (requesterPrincipal === approverPrincipal) {
        throw new ItoError('validation_failed', 'the requester and the approver must be different principals');
      }
      return ledger.transaction(async (tx) => {
        await tx.client.query('insert into tenants (tenant_id, name, policy) values ($1, $2, $3)', [tenantId, name, JSON.stringify(policy)]);
        const requester = await insertKey(tx.client, tenantId, REQUESTER_SCOPES, 'requester', requesterPrincipal);
        const approver = await insertKey(tx.client, tenantId, APPROVER_SCOPES, 'approver', approverPrincipal);
        await tx.append(
          tenantStream(tenantId),
          [
            { type: 'TenantCreated', data: { tenant_id: tenantId, name, policy } },
            { type: 'ApiKeyCreated', data: { key_id: requester.keyId, scopes: REQUESTER_SCOPES, principal: requesterPrincipal } },
            { type: 'ApiKeyCreated', data: { key_id: approver.keyId, scopes: APPROVER_SCOPES, principal: approverPrincipal } },
          ],
          { tenantId, expectedVersion: 'no_stream' },
        );
        return {
          tenant_id: tenantId,
          name,
          file_roots: policy.file_roots,
          requester_key: requester.key,
          requester_key_id: requester.keyId,
          approver_key: approver.key,
          approver_key_id: approver.keyId,
          requester_principal: requesterPrincipal,
          approver_principal: approverPrincipal,
        };
      });
    },

    /** The tenant's policy as the gates read it: what the operator set, over the defaults. */
    async showTenantPolicy(input: { tenantId: string }) {
      requireId('ten', input.tenantId, 'tenant');
      const { rows } = await deps.pool.query<{ policy: Partial<TenantPolicy> }>('select policy from tenants where tenant_id = $1', [input.tenantId]);
      if (!rows[0]) throw new ItoError('not_found', `tenant ${input.tenantId} not found`);
      return { tenant_id: input.tenantId, policy: { ...DEFAULT_TENANT_POLICY, ...rows[0].policy } };
    },

    /** Replaces the fields given (a field left out keeps its value) and records TenantPolicyChanged with the result. */
    async setTenantPolicy(input: { tenantId: string; policy: Partial<TenantPolicy> }) {
      const patch = validate(policySchema, input.policy, 'tenant policy');
      requireId('ten', input.tenantId, 'tenant');
      return ledger.transaction(async (tx) => {
        const { rows } = await tx.client.query<{ policy: Partial<TenantPolicy> }>('select policy from tenants where tenant_id = $1 for update', [input.tenantId]);
        if (!rows[0]) throw new ItoError('not_found', `tenant ${input.tenantId} not found`);
        const policy: TenantPolicy = { ...DEFAULT_TENANT_POLICY, ...rows[0].policy, ...patch };
        await tx.client.query('update tenants set policy = $2 where tenant_id = $1', [input.tenantId, JSON.stringify(policy)]);
        await tx.append(tenantStream(input.tenantId), [{ type: 'TenantPolicyChanged', data: { tenant_id: input.tenantId, policy } }], {
          tenantId: input.tenantId,
          expectedVersion: 'any',
        });
        return { tenant_id: input.tenantId, policy };
      });
    },

    async createKey(input: { tenantId: string; scopes: string[]; label?: string; principal?: string }) {
      if (Array.isArray(input.scopes) && input.scopes.includes(FLEET_SCOPE)) {
        throw new ItoError('validation_failed', `${FLEET_SCOPE} is the operator's, never a tenant key's: use ito-admin operator-key create`);
      }
      const scopes = validate(z.array(z.enum(TENANT_SCOPES)).min(1), input.scopes, 'scopes');
      const principal = scopes.some((s) => REQUEST_OR_APPROVE_SCOPES.includes(s)) ? requiredPrincipal(input.principal, 'principal', '--principal') : optionalPrincipal(input.principal, 'principal');
      requireId('ten', input.tenantId, 'tenant');
      return ledger.transaction(async (tx) => {
        const { rowCount } = await tx.client.query('select 1 from tenants where tenant_id = $1', [input.tenantId]);
        if (!rowCount) throw new ItoError('not_found', `tenant ${input.tenantId} not found`);
        const { keyId, key } = await insertKey(tx.client, input.tenantId, scopes, input.label ?? null, principal);
        await tx.append(tenantStream(input.tenantId), [{ type: 'ApiKeyCreated', data: { key_id: keyId, scopes, principal } }], {
          tenantId: input.tenantId,
          expectedVersion: 'any',
        });
        return { key_id: keyId, key, tenant_id: input.tenantId, scopes, principal };
      });
    },

    /**
     * An operator credential: reads the desk's fleet-wide figures (every tenant's runs and bookings). Created only
     * here, by the operator on the control-plane host; no tenant key and no API route can make one.
     */
    async createOperatorKey(input: { principal: string }) {
      const principal = validate(principalSchema, input.principal, 'principal');
      return ledger.transaction(async (tx) => {
        const created = await tx.client.query('insert into tenants (tenant_id, name, policy) values ($1, $2, $3) on conflict (tenant_id) do nothing', [
          OPERATOR_TENANT_ID,
          'operator',
          JSON.stringify(DEFAULT_TENANT_POLICY),
        ]);
        if (created.rowCount) {
          await tx.append(tenantStream(OPERATOR_TENANT_ID), [{ type: 'TenantCreated', data: { tenant_id: OPERATOR_TENANT_ID, name: 'operator', policy: DEFAULT_TENANT_POLICY } }], {
            tenantId: OPERATOR_TENANT_ID,
            expectedVersion: 'no_stream',
          });
        }
        const { keyId, key } = await insertKey(tx.client, OPERATOR_TENANT_ID, OPERATOR_SCOPES, 'operator', principal);
        await tx.append(tenantStream(OPERATOR_TENANT_ID), [{ type: 'ApiKeyCreated', data: { key_id: keyId, scopes: OPERATOR_SCOPES, principal } }], {
          tenantId: OPERATOR_TENANT_ID,
          expectedVersion: 'any',
        });
        return { key_id: keyId, key, scopes: OPERATOR_SCOPES, principal };
      });
    },

    async revokeKey(input: { keyId: string }) {
      requireId('key', input.keyId, 'key');
      return ledger.transaction(async (tx) => {
        const { rows } = await tx.client.query<{ tenant_id: string; revoked_at: Date | null }>(
          'update api_keys set revoked_at = coalesce(revoked_at, $2) where key_id = $1 returning tenant_id, revoked_at',
          [input.keyId, now()],
        );
        const row = rows[0];
        if (!row) throw new ItoError('not_found', `key ${input.keyId} not found`);
        await tx.append(tenantStream(row.tenant_id), [{ type: 'ApiKeyRevoked', data: { key_id: input.keyId } }], { tenantId: row.tenant_id, expectedVersion: 'any' });
        return { key_id: input.keyId, revoked_at: row.revoked_at!.toISOString() };
      });
    },

    async createBooking(input: z.input<typeof createBookingSchema>) {
      const b = validate(createBookingSchema, input, 'booking');
      if (new Date(b.term_end) <= new Date(b.term_start)) throw new ItoError('validation_failed', 'term_end must be after term_start');
      requireId('ten', b.tenant_id, 'tenant');
      const bookingId = newId('bkg');
      const inventory = b.node_inventory ?? Array.from({ length: b.nodes }, (_, i) => `node-${String(i + 1).padStart(2, '0')}`);
      return ledger.transaction(async (tx) => {
        const { rowCount } = await tx.client.query('select 1 from tenants where tenant_id = $1', [b.tenant_id]);
        if (!rowCount) throw new ItoError('not_found', `tenant ${b.tenant_id} not found`);
        const data = bookingRecord({ ...b, booking_id: bookingId, term_start: new Date(b.term_start), term_end: new Date(b.term_end), node_inventory: inventory });
        await tx.append(bookingStreamId(bookingId), [{ type: 'BookingRecorded', data }], { tenantId: b.tenant_id, expectedVersion: 'no_stream' });
        return data;
      });
    },

    async setBookingStatus(input: { bookingId: string; status: 'expired' | 'revoked' | 'released' | 'completed'; reason?: string }) {
      const status = validate(z.enum(['expired', 'revoked', 'released', 'completed']), input.status, 'booking status');
      requireId('bkg', input.bookingId, 'booking');
      return ledger.transaction(async (tx) => {
        const { rows } = await tx.client.query<{ tenant_id: string; status: string }>('select tenant_id, status from bookings where booking_id = $1 for update', [input.bookingId]);
        const row = rows[0];
        if (!row) throw new ItoError('not_found', `booking ${input.bookingId} not found`);
        await tx.append(
          bookingStreamId(input.bookingId),
          [{ type: 'BookingStatusChanged', data: { booking_id: input.bookingId, status, reason: input.reason ?? `set by operator` } }],
          { tenantId: row.tenant_id, expectedVersion: 'any' },
        );
        return { booking_id: input.bookingId, status, previous_status: row.status };
      });
    },

    /**
     * Revokes a node's credential: the row and the announcement commit together (revokeNodeCredential), so every
     * API process drops its cached copy and the node's next beat or report is refused `credential_revoked`.
     */
    async revokeNode(input: { nodeId: string }) {
      requireId('node', input.nodeId, 'node');
      return ledger.transaction(async (tx) => {
        const revoked = await revokeNodeCredential(tx.client, input.nodeId, now());
        if (!revoked) throw new ItoError('not_found', `node ${input.nodeId} not found`);
        await tx.append(`node-${input.nodeId}`, [{ type: 'NodeCredentialRevoked', data: { node_id: input.nodeId } }], { tenantId: revoked.tenant_id, expectedVersion: 'any' });
        return { node_id: input.nodeId, revoked_at: revoked.revoked_at.toISOString() };
      });
    },

    async registerNode(input: { bookingId: string; name: string }) {
      const name = validate(z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/), input.name, 'node name');
      requireId('bkg', input.bookingId, 'booking');
      const nodeId = newId('node');
      const credential = newSecret('nc');
      return ledger.transaction(async (tx) => {
        const { rows } = await tx.client.query<{ tenant_id: string }>('select tenant_id from bookings where booking_id = $1', [input.bookingId]);
        const row = rows[0];
        if (!row) throw new ItoError('not_found', `booking ${input.bookingId} not found`);
        const dup = await tx.client.query('select 1 from nodes where booking_id = $1 and name = $2', [input.bookingId, name]);
        if (dup.rowCount) throw new ItoError('validation_failed', `booking ${input.bookingId} already has a node named ${name}`);
        await tx.client.query('insert into nodes (node_id, tenant_id, booking_id, name, credential_hash) values ($1,$2,$3,$4,$5)', [
          nodeId,
          row.tenant_id,
          input.bookingId,
          name,
          hashSecret(credential),
        ]);
        await tx.append(`node-${nodeId}`, [{ type: 'NodeRegistered', data: { node_id: nodeId, booking_id: input.bookingId, name } }], {
          tenantId: row.tenant_id,
          expectedVersion: 'no_stream',
        });
        return { node_id: nodeId, booking_id: input.bookingId, name, node_credential: credential };
      });
    },
  };
}

export type AdminService = ReturnType<typeof createAdminService>;
