import { ItoError } from '@ito/contracts';
import type { ItoConfig } from '@ito/config';

/**
 * The ledger database the operator tool writes to: ITO_DATABASE_URL, else the embedded database of an
 * ito-server running under the same ITO_HOME. The URL carries a password and is never printed.
 */
export async function ledgerConnection(config: ItoConfig): Promise<string> {
  if (config.ITO_DATABASE_URL) return config.ITO_DATABASE_URL;
  const { readEmbeddedConnection } = await import('@ito/embedded');
  const embedded = await readEmbeddedConnection(config.ITO_HOME);
  if (embedded) return embedded;
  throw new ItoError('connect_failed', `no ledger database: set ITO_DATABASE_URL, or start \`ito-server start\` with ITO_HOME=${config.ITO_HOME}`);
}
