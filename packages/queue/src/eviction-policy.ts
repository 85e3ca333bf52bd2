import type { Redis } from 'ioredis';

/**
 * Raised when the queue store would lose jobs. BullMQ keeps every job, lock and schedule as Redis keys; a Redis
 * allowed to evict keys under memory pressure drops them without an error, and a run then waits forever on a
 * stage that no worker will ever pick up.
 */
export class QueueStoreUnfitError extends Error {
  override readonly name = 'QueueStoreUnfitError';
}

/** The one policy under which Redis refuses writes instead of dropping keys when it is full. */
export const REQUIRED_EVICTION_POLICY = 'noeviction';

/** A policy name Redis could answer: anything else is not repeated back in a message. */
const POLICY_NAME = /^[a-z-]{1,32}$/;

/**
 * The node's maxmemory-policy: from CONFIG GET, or, where CONFIG is renamed or disabled (as on managed Redis
 * services), from INFO memory, which every Redis since 4.0 answers.
 */
export async function evictionPolicyOf(node: Redis): Promise<string | null> {
  try {
    const reply = (await node.call('CONFIG', 'GET', 'maxmemory-policy')) as unknown;
    if (Array.isArray(reply) && reply.length >= 2 && typeof reply[1] === 'string') return reply[1];
  } catch {
    // CONFIG is refused here; INFO below still tells.
  }
  try {
    const info = await node.info('memory');
    return /^maxmemory_policy:(\S+)\s*$/m.exec(info)?.[1] ?? null;
  } catch {
    return null;
  }
}

/** Refuses unless every node answers noeviction; an unreadable policy is refused too (fail closed). */
export async function assertNoEviction(nodes: Redis[]): Promise<void> {
  for (const node of nodes) {
    const policy = await evictionPolicyOf(node);
    if (policy === REQUIRED_EVICTION_POLICY) continue;
    const where = nodes.length > 1 ? ` on cluster node ${node.options.host ?? '?'}:${node.options.port ?? '?'}` : '';
    if (policy === null) {
      throw new QueueStoreUnfitError(
        `Redis maxmemory-policy could not be read${where} (neither CONFIG GET nor INFO memory answered); the queues need ${REQUIRED_EVICTION_POLICY}`,
      );
    }
    const shown = POLICY_NAME.test(policy) ? policy : 'unrecognised';
    throw new QueueStoreUnfitError(
      `Redis maxmemory-policy is ${shown}${where}; the queues need ${REQUIRED_EVICTION_POLICY}, since an evicting Redis silently drops queued jobs (set maxmemory-policy ${REQUIRED_EVICTION_POLICY})`,
    );
  }
}
