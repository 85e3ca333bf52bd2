import { Cluster, Redis } from 'ioredis';

export type RedisClient = Redis | Cluster;

/**
 * One client for the kit: a plain connection, or a cluster client seeded from the one node the URL names (it
 * learns the other masters and the slot map from that node, and follows MOVED redirections). The URL's user,
 * password and TLS apply to every node. maxRetriesPerRequest null is what BullMQ workers require.
 */
export function createRedisClient(url: string, cluster: boolean): RedisClient {
  if (!cluster) return new Redis(url, { maxRetriesPerRequest: null, lazyConnect: false });
  const seed = new URL(url);
  const redisOptions = {
    maxRetriesPerRequest: null,
    ...(seed.username ? { username: decodeURIComponent(seed.username) } : {}),
    ...(seed.password ? { password: decodeURIComponent(seed.password) } : {}),
    ...(seed.protocol === 'rediss:' ? { tls: { servername: seed.hostname } } : {}),
  };
  return new Cluster([{ host: seed.hostname, port: seed.port ? Number(seed.port) : 6379 }], {
    redisOptions,
    // BullMQ's blocking reads must not be sent to a replica, and a slot move must be followed, not failed.
    scaleReads: 'master',
    enableReadyCheck: true,
  });
}

/** The nodes whose settings decide whether jobs survive: every master of a cluster, or the one server. */
export async function dataNodes(client: RedisClient): Promise<Redis[]> {
  if (client instanceof Cluster) {
    // The node list is filled once the slot map is loaded; a command waits for that.
    await client.ping();
    return client.nodes('master');
  }
  return [client];
}
