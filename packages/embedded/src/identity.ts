import { execFile } from 'node:child_process';
import { chmod, chown, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import type { EmbeddedLogger } from './logger.js';

const run = promisify(execFile);

/** The system user PostgreSQL runs as when this process is root (initdb and postgres refuse to run as root). */
export const SERVICE_USER = 'ito-pg';

/** Who the PostgreSQL processes run as: the current user, or a dedicated unprivileged user when root. */
export type ServerIdentity = { kind: 'self' } | { kind: 'service'; uid: number; gid: number; name: string };

export async function serverIdentity(logger: EmbeddedLogger): Promise<ServerIdentity> {
  if (process.getuid?.() !== 0) return { kind: 'self' };
  const existing = await lookupUser(SERVICE_USER);
  if (existing) return { kind: 'service', name: SERVICE_USER, ...existing };
  logger.info({ user: SERVICE_USER }, 'creating the system user embedded PostgreSQL runs as');
  try {
    await run('useradd', ['--system', '--no-create-home', '--user-group', '--shell', '/usr/sbin/nologin', SERVICE_USER]);
  } catch (err) {
    // Another process may have created it at the same moment.
    if (!(await lookupUser(SERVICE_USER))) throw new Error(`could not create system user ${SERVICE_USER}: ${(err as Error).message}`);
  }
  const created = await lookupUser(SERVICE_USER);
  if (!created) throw new Error(`system user ${SERVICE_USER} is missing after creation`);
  return { kind: 'service', name: SERVICE_USER, ...created };
}

async function lookupUser(name: string): Promise<{ uid: number; gid: number } | null> {
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])]);
    return { uid: Number.parseInt(uid.stdout, 10), gid: Number.parseInt(gid.stdout, 10) };
  } catch {
    return null;
  }
}

/** spawn() options that make a child run as the identity. */
export function spawnIdentity(id: ServerIdentity): { uid?: number; gid?: number } {
  return id.kind === 'service' ? { uid: id.uid, gid: id.gid } : {};
}

/**
 * Hands a directory to the identity: owned by it, mode 0700 (PostgreSQL insists on it), and every ancestor
 * searchable so the service user can reach it. Ancestors only gain the search bit for others (o+x), which
 * lets the user traverse a path it already knows without listing anything.
 */
export async function handOver(dir: string, id: ServerIdentity, logger: EmbeddedLogger): Promise<void> {
  if (id.kind === 'service') {
    const info = await stat(dir);
    if (info.uid !== id.uid || info.gid !== id.gid) await chown(dir, id.uid, id.gid);
    let parent = dirname(dir);
    for (;;) {
      const p = await stat(parent);
      if ((p.mode & 0o001) === 0) {
        logger.warn({ dir: parent }, `granting search permission (o+x) so ${id.name} can reach the embedded data directory`);
        await chmod(parent, (p.mode & 0o7777) | 0o001);
      }
      const next = dirname(parent);
      if (next === parent) break;
      parent = next;
    }
  }
  await chmod(dir, 0o700);
}
