import type pg from 'pg';
import type { Logger } from '@ito/config';
import { listen } from '@ito/ledger';
import { ASSIGNMENTS_CHANNEL } from '@ito/runs';

/**
 * Wakes long-polling agents when their node's tasks change. One LISTEN connection per API process; the tasks
 * projection NOTIFYs with the node id in the committing transaction. If the connection drops, every waiter is
 * woken (it reads the tasks table again) and the listener reconnects, so a lost notification costs one extra
 * read, never a missed task.
 */
export interface AssignmentNotifier {
  /**
   * Starts listening for the node's next change now, before the caller reads what it waits for: a change committed
   * between that read and the wait still wakes it (a wait begun after the read lost such a change, and the poll
   * slept to its deadline). `changed` resolves when the node's tasks or rollouts may have changed, when `ms` pass,
   * or when `signal` aborts; `cancel` stops listening. Long polls go through {@link pollUntil}, which does this.
   */
  watch(nodeId: string, ms: number, signal?: AbortSignal): { changed: Promise<void>; cancel: () => void };
  /** True once closing began: long polls answer at once instead of waiting. */
  readonly closed: boolean;
  close(): Promise<void>;
}

export function createAssignmentNotifier(pool: pg.Pool, logger: Logger): AssignmentNotifier {
  const waiters = new Map<string, Set<() => void>>();
  let closed = false;
  const wakeAll = () => {
    for (const set of waiters.values()) for (const wake of set) wake();
  };
  const listener = listen(pool, ASSIGNMENTS_CHANNEL, {
    onNotify: (nodeId) => {
      for (const wake of waiters.get(nodeId) ?? []) wake();
    },
    // Anything committed while nobody listened is read by the waiters' next query.
    onListening: wakeAll,
    onError: (err) => logger.warn({ err: { message: err.message } }, 'assignment listener lost its connection; reconnecting'),
  });

  function watch(nodeId: string, ms: number, signal?: AbortSignal): { changed: Promise<void>; cancel: () => void } {
    if (signal?.aborted || closed) return { changed: Promise.resolve(), cancel: () => undefined };
    let done = () => undefined as void;
    const changed = new Promise<void>((resolve) => {
      let set = waiters.get(nodeId);
      if (!set) waiters.set(nodeId, (set = new Set()));
      done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        set!.delete(done);
        if (set!.size === 0 && waiters.get(nodeId) === set) waiters.delete(nodeId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
      set.add(done);
    });
    return { changed, cancel: () => done() };
  }

  return {
    get closed() {
      return closed;
    },
    watch,
    async close() {
      closed = true;
      wakeAll();
      await listener.close();
    },
  };
}

/**
 * A long poll on a node's channel: reads, and answers the read once `ready` holds for it, `deadline` (epoch ms)
 * has passed, `signal` aborted or the notifier is closing; otherwise waits for the node's next change and reads
 * again. It listens before each read, so a change committed between a read and its wait still wakes it: every
 * long poll goes through here rather than through a wait of its own.
 */
export async function pollUntil<T>(
  notifier: AssignmentNotifier,
  nodeId: string,
  deadline: number,
  signal: AbortSignal,
  read: () => Promise<T>,
  ready: (answer: T) => boolean,
): Promise<T> {
  for (;;) {
    const left = deadline - Date.now();
    const change = left > 0 && !signal.aborted && !notifier.closed ? notifier.watch(nodeId, left, signal) : null;
    const answer = await read().catch((err: unknown) => {
      change?.cancel();
      throw err;
    });
    if (ready(answer) || !change || notifier.closed) {
      change?.cancel();
      return answer;
    }
    await change.changed;
  }
}
