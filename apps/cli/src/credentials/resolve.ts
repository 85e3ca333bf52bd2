import type { ItoConfig } from '@ito/config';
import { readStoredCredential } from './store.js';

export interface ResolvedCredential {
  key: string;
  source: 'file' | 'env';
}

/** The stored login first, then ITO_API_KEY. Never an argument. */
export async function resolveCredential(config: ItoConfig): Promise<ResolvedCredential | null> {
  const stored = await readStoredCredential(config.ITO_TOKEN_FILE);
  if (stored) return { key: stored.key, source: 'file' };
  if (config.ITO_API_KEY) return { key: config.ITO_API_KEY, source: 'env' };
  return null;
}
