import { connectionUrl, embeddedDataDir, readCredentials, readServerInfo, sidecarPaths } from './files.js';
import { processAlive } from './processes.js';

/**
 * The URL of the embedded database a running ito-server keeps under this ITO_HOME, or null when none is
 * running. Used by processes that share the home (the operator tool) to reach the same ledger. A server whose
 * owner has died counts as not running: the next ito-server start shuts such an orphan down.
 */
export async function readEmbeddedConnection(itoHome: string): Promise<string | null> {
  const files = sidecarPaths(embeddedDataDir(itoHome));
  const info = await readServerInfo(files.server);
  if (!info || !processAlive(info.pid) || !processAlive(info.ownerPid)) return null;
  const creds = await readCredentials(files.credentials);
  if (!creds) return null;
  return connectionUrl(creds, info.port, info.database);
}
