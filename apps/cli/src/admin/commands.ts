import { ItoError } from '@ito/contracts';
import type { AdminService } from '@ito/api';
import type { ParsedCommand } from '../args/parse.js';
import { keyValue } from '../human/format.js';

export interface AdminResult {
  data: Record<string, unknown>;
  human: (data: Record<string, unknown>) => string;
}

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

type AdminHandler = (cmd: ParsedCommand, admin: AdminService) => Promise<AdminResult>;

const plain = (d: Record<string, unknown>) => keyValue(d);
const secret = (d: Record<string, unknown>) => `${keyValue(d)}${SHOWN_ONCE}`;

const bookingStatus =
  (status: 'expired' | 'revoked' | 'released'): AdminHandler =>
  async (cmd, admin) => ({ data: await admin.setBookingStatus({ bookingId: cmd.positionals[0]!, status }), human: plain });

/** ito-admin verbs mapped onto the API's admin service: the same handlers and events as the API itself. */
export const ADMIN_HANDLERS: Record<string, AdminHandler> = {
  'tenant create': async (cmd, admin) => {
    const requesterPrincipal = optional(cmd, 'requester-principal');
    const approverPrincipal = optional(cmd, 'approver-principal');
    const data = await admin.createTenant({
      name: str(cmd, 'name'),
      ...(requesterPrincipal !== undefined ? { requesterPrincipal } : {}),
      ...(approverPrincipal !== undefined ? { approverPrincipal } : {}),
    });
    return { data, human: secret };
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
  'node register': async (cmd, admin) => ({ data: await admin.registerNode({ bookingId: str(cmd, 'booking'), name: str(cmd, 'name') }), human: secret }),
};
