import type pg from 'pg';
import type { Logger } from '@ito/config';
import { listen } from '@ito/ledger';
import { NODE_CREDENTIALS_CHANNEL } from '@ito/runs';

/** Who a verified node credential speaks for. */
export interface NodeIdentity {
  tenantId: string;
  nodeId: string;
  bookingId: string;
}

/** How many verified node credentials one API process keeps, and for how long. */
export interface NodeCredentialCacheLimits {
  maxEntries: number;
  ttlMs: number;
}

/**
 * 100,000 nodes is four times the fleet the heartbeat bench registers; a minute bounds how long a revocation
 * could be missed if the LISTEN connection died without the process noticing (a half-open socket), at the cost
 * of one lookup per node a minute.
 */
export const DEFAULT_NODE_CREDENTIAL_CACHE: NodeCredentialCacheLimits = { maxEntries: 100_000, ttlMs: 60_000 };

/**
 * The node credentials this process verified, keyed by their hash, so a node's heartbeats cost no database
 * read. Revocations arrive by NOTIFY on {@link NODE_CREDENTIALS_CHANNEL}; while the LISTEN connection is down
 * (and before it is first up) the cache keeps nothing and answers nothing, so a revocation is never missed:
 * every credential is then read from the database as if there were no cache.
 */
export interface NodeCredentialCache {
  get(hash: string): NodeIdentity | undefined;
  /**
   * Taken before the database read whose answer `put` keeps: an answer read before a revocation was heard is
   * dropped rather than cached (the read may have seen the row before the revocation committed).
   */
  ticket(): number;
  put(hash: string, identity: NodeIdentity, ticket: number): void;
  /** Whether revocations are being heard (the cache is in use). */
  readonly listening: boolean;
  close(): Promise<void>;
}

export function createNodeCredentialCache(pool: pg.Pool, logger: Logger, limits: NodeCredentialCacheLimits = DEFAULT_NODE_CREDENTIAL_CACHE): NodeCredentialCache {
  const entries = new Map<string, { identity: NodeIdentity; expiresAt: number }>();
  const hashOfNode = new Map<string, string>();
  let generation = 0;
  let listening = false;

  const forget = (hash: string) => {
    const entry = entries.get(hash);
    if (!entry) return;
    entries.delete(hash);
    if (hashOfNode.get(entry.identity.nodeId) === hash) hashOfNode.delete(entry.identity.nodeId);
  };
  const clear = () => {
    generation++;
    entries.clear();
    hashOfNode.clear();
  };

  const listener = listen(pool, NODE_CREDENTIALS_CHANNEL, {
    onNotify: (nodeId) => {
      generation++;
      const hash = hashOfNode.get(nodeId);
      if (hash !== undefined) forget(hash);
    },
    onConnected: () => {
      clear();
      listening = true;
    },
    onLost: () => {
      listening = false;
      clear();
    },
    onListening: () => undefined,
    onError: (err) => logger.warn({ err: { message: err.message } }, 'node credential listener lost its connection; credentials are read from the database until it is back'),
  });

  return {
    get listening() {
      return listening;
    },
    get(hash) {
      if (!listening) return undefined;
      const entry = entries.get(hash);
      if (!entry) return undefined;
      if (entry.expiresAt <= Date.now()) {
        forget(hash);
        return undefined;
      }
      return entry.identity;
    },
    ticket: () => generation,
    put(hash, identity, ticket) {
      if (!listening || ticket !== generation) return;
      forget(hash);
      // The oldest entry makes room: Map keeps insertion order, and an entry is re-inserted only when it expired.
      if (entries.size >= limits.maxEntries) {
        const oldest = entries.keys().next();
        if (!oldest.done) forget(oldest.value);
      }
      const previous = hashOfNode.get(identity.nodeId);
      if (previous !== undefined) forget(previous);
      entries.set(hash, { identity, expiresAt: Date.now() + limits.ttlMs });
      hashOfNode.set(identity.nodeId, hash);
    },
    async close() {
      listening = false;
      clear();
      await listener.close();
    },
  };
}
