import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isPostgresProcess, processAlive, waitForExit } from './processes.js';
import type { EmbeddedLogger } from './logger.js';

/**
 * Clears what a killed previous run left behind in the data directory before the server starts:
 * - a postmaster.pid naming a dead process (or one whose pid was reused by something else) is removed;
 * - a PostgreSQL still running on this directory, orphaned by an owner that was killed, gets a fast shutdown.
 * Callers check first that no live owner still holds the directory.
 */
export async function clearStaleServer(dataDir: string, logger: EmbeddedLogger): Promise<void> {
  const lockFile = join(dataDir, 'postmaster.pid');
  let text: string;
  try {
    text = await readFile(lockFile, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const pid = Number.parseInt(text.split('\n')[0] ?? '', 10);
  if (Number.isInteger(pid) && pid > 0 && processAlive(pid) && (await isPostgresProcess(pid))) {
    logger.warn({ pid }, 'an orphaned embedded PostgreSQL from a previous run is still running; shutting it down');
    process.kill(pid, 'SIGINT');
    if (!(await waitForExit(pid, 20_000))) {
      process.kill(pid, 'SIGQUIT');
      if (!(await waitForExit(pid, 5_000))) throw new Error(`orphaned PostgreSQL (pid ${pid}) did not stop`);
    }
    return;
  }
  logger.info({ pid }, 'removing a stale postmaster.pid left by a previous run');
  await rm(lockFile, { force: true });
}
