/** Which store carries the queues. Code above this package never branches on it. */
export type QueueBackendConfig =
  | {
      kind: 'redis';
      /** Carries credentials when the server needs them: never log it. In cluster mode, any one node of the cluster. */
      redisUrl: string;
      /** The URL names one node of a Redis Cluster; the client discovers the others from it. @defaultValue false */
      cluster?: boolean;
    }
  | { kind: 'postgres'; databaseUrl: string };

/** Redis when ITO_REDIS_URL is set (the production default); otherwise BullMQ's PostgreSQL backend in the ledger database. */
export function queueBackendFromEnv(
  cfg: { ITO_REDIS_URL?: string | undefined; ITO_REDIS_CLUSTER?: boolean | undefined },
  databaseUrl: string,
): QueueBackendConfig {
  return cfg.ITO_REDIS_URL ? { kind: 'redis', redisUrl: cfg.ITO_REDIS_URL, cluster: cfg.ITO_REDIS_CLUSTER ?? false } : { kind: 'postgres', databaseUrl };
}
