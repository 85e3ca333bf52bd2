/** Which store carries the queues. Code above this package never branches on it. */
export type QueueBackendConfig = { kind: 'redis'; redisUrl: string } | { kind: 'postgres'; databaseUrl: string };

/** Redis when ITO_REDIS_URL is set (the production default); otherwise BullMQ's PostgreSQL backend in the ledger database. */
export function queueBackendFromEnv(cfg: { ITO_REDIS_URL?: string | undefined }, databaseUrl: string): QueueBackendConfig {
  return cfg.ITO_REDIS_URL ? { kind: 'redis', redisUrl: cfg.ITO_REDIS_URL } : { kind: 'postgres', databaseUrl };
}
