import { spawn } from 'node:child_process';
import { chown, mkdir, mkdtemp, open, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PostgresBinaries } from './binaries.js';
import type { Credentials } from './files.js';
import { handOver, spawnIdentity, type ServerIdentity } from './identity.js';
import type { EmbeddedLogger } from './logger.js';

/**
 * Creates a new cluster at dataDir. initdb writes into a sibling scratch directory that is renamed into place
 * only on success, so a run killed mid-init never leaves a half-made data directory behind.
 */
export async function initCluster(args: {
  bins: PostgresBinaries;
  dataDir: string;
  creds: Credentials;
  id: ServerIdentity;
  logFile: string;
  logger: EmbeddedLogger;
}): Promise<void> {
  const { bins, dataDir, creds, id, logFile, logger } = args;
  const scratch = `${dataDir}.init-${process.pid}`;
  await rm(scratch, { recursive: true, force: true });
  await mkdir(scratch, { recursive: true, mode: 0o700 });
  await handOver(scratch, id, logger);

  // The password reaches initdb through a file only the server's user can read, never through argv.
  const pwDir = await mkdtemp(join(tmpdir(), 'ito-pg-init-'));
  const pwFile = join(pwDir, 'pw');
  await writeFile(pwFile, `${creds.password}\n`, { mode: 0o600 });
  if (id.kind === 'service') {
    await chown(pwDir, id.uid, id.gid);
    await chown(pwFile, id.uid, id.gid);
  }
  const log = await open(logFile, 'a', 0o600);
  try {
    logger.info({ dataDir }, 'initialising embedded PostgreSQL data directory');
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(
        bins.initdb,
        [`--pgdata=${scratch}`, '--auth=scram-sha-256', `--username=${creds.user}`, `--pwfile=${pwFile}`, '--encoding=UTF8', '--no-locale'],
        { ...spawnIdentity(id), cwd: '/', stdio: ['ignore', log.fd, log.fd], env: { ...process.env, LC_ALL: 'C' } },
      );
      child.once('error', reject);
      child.once('exit', (c) => resolve(c));
    });
    if (code !== 0) throw new Error(`initdb failed with exit code ${String(code)}; see ${logFile}`);
    await rename(scratch, dataDir);
  } finally {
    await log.close();
    await rm(pwDir, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  }
}
