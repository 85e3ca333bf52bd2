import { z } from 'zod';

export const ROLES = ['api', 'worker', 'monitor'] as const;
export type Role = (typeof ROLES)[number];

export type ServerCommand = { command: 'migrate' } | { command: 'start'; roles: Role[] } | { command: 'help' };

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const USAGE = `usage: ito-server start [--role api|worker|monitor]   run all roles (default) or one
       ito-server migrate                             apply database migrations
configuration comes from the environment only (see docs/contract.md)`;

const roleSchema = z.enum(ROLES);

/** Parses argv (without node and the script); pure, so the grammar is testable without a process. */
export function parseArgs(argv: string[]): ServerCommand {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return { command: 'help' };
  if (command === 'migrate') {
    if (rest.length > 0) throw new UsageError(`migrate takes no arguments (got ${rest[0]})`);
    return { command: 'migrate' };
  }
  if (command !== 'start') throw new UsageError(`unknown command: ${command}`);
  let role: Role | undefined;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const inline = arg.startsWith('--role=') ? arg.slice('--role='.length) : undefined;
    if (arg !== '--role' && inline === undefined) throw new UsageError(`unknown option: ${arg}`);
    if (role) throw new UsageError('--role may be given once');
    const value = inline ?? rest[++i];
    const parsed = roleSchema.safeParse(value);
    if (!parsed.success) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
    role = parsed.data;
  }
  return { command: 'start', roles: role ? [role] : [...ROLES] };
}
