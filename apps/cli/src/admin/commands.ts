import { mkdir, realpath } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ItoError } from '@ito/contracts';
import type { AdminService } from '@ito/runs';
import type { EvalBatteryRegistry } from '@ito/evals';
import type { ParsedCommand } from '../args/parse.js';
import { keyValue } from '../human/format.js';
import { batteryCommand } from './battery-commands.js';

export type { AdminResult } from './admin-result.js';
import type { AdminResult } from './admin-result.js';

const SHOWN_ONCE = '\nStore the secret above now: it is kept only as a hash and is not shown again.\n';

const str = (cmd: ParsedCommand, name: string): string => {
  const v = cmd.flags[name];
  if (typeof v !== 'string') throw new ItoError('validation_failed', `missing --${name}`);
  return v;
};

const optional = (cmd: ParsedCommand, name: string): string | undefined => {
  const v = cmd.flags[name];
  return typeof v === 'string' ? v : undefined;
};

const num = (cmd: ParsedCommand, name: string): number => {
  const raw = str(cmd, name);
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new ItoError('validation_failed', `--${name} must be a number, got "${raw}"`);
  return n;
};

/** What a handler knows of where ito-admin runs. */
export interface AdminContext {
  /** `$ITO_HOME` when the ledger is the embedded database of this host (no ITO_DATABASE_URL), else null. */
  embeddedHome: string | null;
  /** The eval battery registry on the ledger database and the operator's storage, opened when a battery verb runs. */
  batteries: () => Promise<EvalBatteryRegistry>;
}

type AdminHandler = (cmd: ParsedCommand, admin: AdminService, ctx: AdminContext) => Promise<AdminResult>;

/** A comma-separated list flag: absent is undefined (keep), `""` is an empty list. */
const list = (cmd: ParsedCommand, name: string): string[] | undefined => {
  const v = optional(cmd, name);
  return v === undefined ? undefined : v.split(',').map((s) => s.trim()).filter(Boolean);
};

const POLICY_FLAGS = ['file-roots', 'storage-schemes', 'storage-prefixes', 'licenses', 'max-contaminated-fraction'];

/** `tenant policy set`: the fields given, and only those; the service validates them (absolute normalised roots). */
function policyPatch(cmd: ParsedCommand, current: { checkpoint_storage: { schemes: string[]; prefixes: string[] } }): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  const roots = list(cmd, 'file-roots');
  if (roots !== undefined) patch.file_roots = roots;
  const licenses = list(cmd, 'licenses');
  if (licenses !== undefined) patch.allowed_licenses = licenses;
  if (optional(cmd, 'max-contaminated-fraction') !== undefined) patch.max_contaminated_fraction = num(cmd, 'max-contaminated-fraction');
  const schemes = list(cmd, 'storage-schemes');
  const prefixes = list(cmd, 'storage-prefixes');
  if (schemes !== undefined || prefixes !== undefined) {
    patch.checkpoint_storage = { schemes: schemes ?? current.checkpoint_storage.schemes, prefixes: prefixes ?? current.checkpoint_storage.prefixes };
  }
  if (Object.keys(patch).length === 0) throw new ItoError('validation_failed', `tenant policy set needs at least one of ${POLICY_FLAGS.map((f) => `--${f}`).join(', ')}`);
  return patch;
}

/** The policy as lines an operator reads; --json prints it whole. */
const policyHuman = (d: Record<string, unknown>) => {
  const p = d.policy as { file_roots: string[]; checkpoint_storage: { schemes: string[]; prefixes: string[] }; allowed_licenses: string[]; max_contaminated_fraction: number };
  return keyValue({
    tenant_id: d.tenant_id,
    file_roots: p.file_roots.join(', ') || '(none)',
    storage_schemes: p.checkpoint_storage.schemes.join(', '),
    storage_prefixes: p.checkpoint_storage.prefixes.join(', ') || '(any)',
    licenses: p.allowed_licenses.join(', '),
    max_contaminated_fraction: p.max_contaminated_fraction,
  });
};

const plain = (d: Record<string, unknown>) => keyValue(d);
const secret = (d: Record<string, unknown>) => `${keyValue(d)}${SHOWN_ONCE}`;

const bookingStatus =
  (status: 'expired' | 'revoked' | 'released'): AdminHandler =>
  async (cmd, admin) => ({ data: await admin.setBookingStatus({ bookingId: cmd.positionals[0]!, status }), human: plain });

/** ito-admin verbs mapped onto the API's admin service: the same handlers and events as the API itself. */
export const ADMIN_HANDLERS: Record<string, AdminHandler> = {
  'tenant create': async (cmd, admin, ctx) => {
    const requesterPrincipal = optional(cmd, 'requester-principal');
    const approverPrincipal = optional(cmd, 'approver-principal');
    // The real path of $ITO_HOME: a root with a symlink in it would refuse every ref under it (they are opened without following one).
    const localFileRootBase = ctx.embeddedHome === null ? undefined : join(await realpath(ctx.embeddedHome).catch(() => resolve(ctx.embeddedHome!)), 'files');
    const data = await admin.createTenant({
      name: str(cmd, 'name'),
      ...(requesterPrincipal !== undefined ? { requesterPrincipal } : {}),
      ...(approverPrincipal !== undefined ? { approverPrincipal } : {}),
      ...(localFileRootBase !== undefined ? { localFileRootBase } : {}),
    });
    // The embedded install's own root exists from the start (0700), so the first run can name a file in it.
    for (const root of data.file_roots) await mkdir(root, { recursive: true, mode: 0o700 });
    return { data, human: secret };
  },
  'tenant policy': async (cmd, admin) => {
    const action = cmd.positionals[0];
    const tenantId = str(cmd, 'tenant');
    if (action === 'show') {
      const given = POLICY_FLAGS.filter((f) => cmd.flags[f] !== undefined);
      if (given.length > 0) throw new ItoError('validation_failed', `tenant policy show takes no --${given[0]}; use tenant policy set`);
      return { data: await admin.showTenantPolicy({ tenantId }), human: policyHuman };
    }
    if (action !== 'set') throw new ItoError('validation_failed', 'tenant policy needs show or set');
    const { policy } = await admin.showTenantPolicy({ tenantId });
    return { data: await admin.setTenantPolicy({ tenantId, policy: policyPatch(cmd, policy) }), human: policyHuman };
  },
  'key create': async (cmd, admin) => {
    const principal = optional(cmd, 'principal');
    const data = await admin.createKey({
      tenantId: str(cmd, 'tenant'),
      scopes: str(cmd, 'scopes').split(',').map((s) => s.trim()).filter(Boolean),
      ...(principal !== undefined ? { principal } : {}),
    });
    return { data, human: secret };
  },
  'operator-key create': async (cmd, admin) => ({ data: await admin.createOperatorKey({ principal: str(cmd, 'principal') }), human: secret }),
  'key revoke': async (cmd, admin) => ({ data: await admin.revokeKey({ keyId: cmd.positionals[0]! }), human: plain }),
  'booking create': async (cmd, admin) => {
    const status = cmd.flags.status;
    const data = await admin.createBooking({
      tenant_id: str(cmd, 'tenant'),
      gpu: str(cmd, 'gpu'),
      nodes: num(cmd, 'nodes'),
      gpus_per_node: num(cmd, 'gpus-per-node'),
      region: str(cmd, 'region'),
      fabric: str(cmd, 'fabric'),
      term_start: str(cmd, 'term-start'),
      term_end: str(cmd, 'term-end'),
      rate_usd_per_gpu_hour: num(cmd, 'rate-usd-per-gpu-hour'),
      ...(typeof status === 'string' ? { status: status as 'completed' } : {}),
    });
    return { data, human: plain };
  },
  'booking expire': bookingStatus('expired'),
  'booking revoke': bookingStatus('revoked'),
  'booking release': bookingStatus('released'),
  'battery add': async (cmd, _admin, ctx) => batteryCommand(cmd, await ctx.batteries()),
  'battery list': async (cmd, _admin, ctx) => batteryCommand(cmd, await ctx.batteries()),
  'node register': async (cmd, admin) => ({ data: await admin.registerNode({ bookingId: str(cmd, 'booking'), name: str(cmd, 'name') }), human: secret }),
  'node revoke': async (cmd, admin) => ({ data: await admin.revokeNode({ nodeId: cmd.positionals[0]! }), human: plain }),
};
