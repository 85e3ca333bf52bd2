import pg from 'pg';
import type { Logger } from '@ito/config';
import { ASSIGNMENTS_CHANNEL } from '../projections/tasks-projection.js';

/**
 * Wakes long-polling agents when their node's tasks change. One LISTEN connection per API process; the tasks
 * projection NOTIFYs with the node id in the committing transaction. If the connection drops, every waiter is
 * woken (it reads the tasks table again) and the listener reconnects, so a lost notification costs one extra
 * read, never a missed task.
 */
export interface AssignmentNotifier {
  /** Resolves when the node's tasks may have changed, when `ms` pass, or when `signal` aborts. */
  wait(nodeId: string, ms: number, signal?: AbortSignal): Promise<void>;
  /** True once closing began: long polls answer at once instead of waiting. */
  readonly closed: boolean;
  close(): Promise<void>;
}

export function createAssignmentNotifier(pool: pg.Pool, logger: Logger): AssignmentNotifier {
  const waiters = new Map<string, Set<() => void>>();
  let client: pg.Client | null = null;
  let closed = false;
  let reconnectTimer: NodeJS.Timeout | undefined;

  const wakeNode = (nodeId: string) => {
    for (const wake of waiters.get(nodeId) ?? []) wake();
  };
  const wakeAll = () => {
    for (const set of waiters.values()) for (const wake of set) wake();
  };

  async function connect(): Promise<void> {
    if (closed) return;
    const c = new pg.Client(pool.options as pg.ClientConfig);
    c.on('notification', (msg) => {
      if (msg.channel === ASSIGNMENTS_CHANNEL && msg.payload) wakeNode(msg.payload);
    });
    const lost = (err?: Error) => {
      if (client !== c) return;
      client = null;
      wakeAll();
      if (!closed) {
        logger.warn({ err: err ? { message: err.message } : undefined }, 'assignment listener lost its connection; reconnecting');
        reconnectTimer = setTimeout(() => void connect(), 1_000);
      }
    };
    c.on('error', lost);
    c.on('end', () => lost());
    try {
      await c.connect();
      await c.query(`listen ${ASSIGNMENTS_CHANNEL}`);
      if (closed) {
        // Closed while connecting: this connection is nobody's, so it must not outlive the close.
        await c.end().catch(() => undefined);
        return;
      }
      client = c;
      // Anything committed while nobody listened is read by the waiters' next query.
      wakeAll();
    } catch (err) {
      await c.end().catch(() => undefined);
      if (!closed) reconnectTimer = setTimeout(() => void connect(), 1_000);
      logger.warn({ err: { message: (err as Error).message } }, 'assignment listener could not connect; retrying');
    }
  }
  const started = connect();

  return {
    get closed() {
      return closed;
    },
    async wait(nodeId, ms, signal) {
      await started;
      if (signal?.aborted || closed) return;
      await new Promise<void>((resolve) => {
        let set = waiters.get(nodeId);
        if (!set) waiters.set(nodeId, (set = new Set()));
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          set!.delete(done);
          if (set!.size === 0) waiters.delete(nodeId);
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal?.addEventListener('abort', done, { once: true });
        set.add(done);
      });
    },
    async close() {
      closed = true;
      clearTimeout(reconnectTimer);
      wakeAll();
      await started;
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}
