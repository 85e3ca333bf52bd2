import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';

/**
 * Files kept beside (not inside) the data directory `<parent>/<name>`:
 * - `<name>.credentials.json` (0600): the superuser password generated at first init.
 * - `<name>.server.json` (0600): where the running server listens, so another process on the same home
 *   (the operator tool) can find it.
 * - `<name>.log`: the server's own log output.
 */
export function sidecarPaths(dataDir: string): { credentials: string; server: string; log: string } {
  const parent = dirname(dataDir);
  const name = basename(dataDir);
  return {
    credentials: join(parent, `${name}.credentials.json`),
    server: join(parent, `${name}.server.json`),
    log: join(parent, `${name}.log`),
  };
}

/** The data directory ito-server uses under an ITO_HOME. */
export function embeddedDataDir(itoHome: string): string {
  return join(itoHome, 'pg');
}

const credentialsSchema = z.object({ user: z.string().min(1), password: z.string().min(16) }).strict();
export type Credentials = z.infer<typeof credentialsSchema>;

export const serverInfoSchema = z
  .object({
    port: z.number().int().min(1).max(65535),
    host: z.literal('127.0.0.1'),
    database: z.string().min(1),
    /** The postmaster's pid. */
    pid: z.number().int().positive(),
    /** The process that started the server and will stop it. */
    ownerPid: z.number().int().positive(),
    dataDir: z.string().min(1),
    startedAt: z.string(),
  })
  .strict();
export type ServerInfo = z.infer<typeof serverInfoSchema>;

export function newCredentials(): Credentials {
  // Hex keeps the password URL-safe, so connection strings need no escaping.
  return { user: 'postgres', password: randomBytes(24).toString('hex') };
}

export async function readCredentials(file: string): Promise<Credentials | null> {
  const raw = await readJson(file);
  if (raw === undefined) return null;
  const parsed = credentialsSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`embedded PostgreSQL credentials file ${file} is malformed`);
  return parsed.data;
}

export async function readServerInfo(file: string): Promise<ServerInfo | null> {
  const raw = await readJson(file);
  if (raw === undefined) return null;
  const parsed = serverInfoSchema.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

/** Writes JSON atomically (temp file then rename) with mode 0600. */
export async function writePrivateJson(file: string, value: unknown): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
}

export async function removeFile(file: string): Promise<void> {
  await rm(file, { force: true });
}

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

export function connectionUrl(creds: Credentials, port: number, database: string): string {
  return `postgres://${encodeURIComponent(creds.user)}:${encodeURIComponent(creds.password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}
