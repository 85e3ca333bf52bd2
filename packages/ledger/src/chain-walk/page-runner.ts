import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { PageOutcome } from '../audit/link-rules.js';
import { walkRawPage, type ChainKind } from './pages.js';

/** Walks pages of links: on this thread, or spread over hashing threads. */
export interface PageRunner {
  /** How many pages it can work on at once. */
  readonly width: number;
  /** The page's buffer goes to the thread that walks it: the caller must not use it after. */
  walk(kind: ChainKind, bytes: Uint8Array): Promise<PageOutcome>;
  close(): Promise<void>;
}

/** Below this many links, starting threads costs more than it saves. */
export const THREADED_FROM_LINKS = 50_000;

/**
 * Hashing threads only on the cores beyond the two the walk has busy anyway (PostgreSQL's backend writing the
 * COPY, and this thread reading it), at most four (past that the database's reading is the limit): on two
 * cores the walk hashes on this thread. Measured on two cores, the same chain walked inline, on one thread and
 * on two, taking turns: the process's CPU per link about 8–9 µs inline, 10–12 µs with one thread and 10–23 µs
 * with two (each thread starts cold, loads its modules, and its pages wait on the hand-off), and the walk no
 * faster with threads, which only took the core PostgreSQL needed.
 */
export function defaultThreads(links: number): number {
  return links < THREADED_FROM_LINKS ? 0 : Math.max(0, Math.min(4, availableParallelism() - 2));
}

export function pageRunner(threads: number): PageRunner {
  return threads > 0 ? new ThreadedRunner(threads) : INLINE;
}

const INLINE: PageRunner = {
  width: 1,
  walk: async (kind, bytes) => walkRawPage(kind, bytes),
  close: async () => undefined,
};

/**
 * The worker's module beside this one: compiled JavaScript once built, started with no flags of the parent's
 * (a loader the parent runs under would cost each thread its memory and start-up for nothing). Run from the
 * TypeScript sources (the tests do), the worker is the .ts file and needs a TypeScript loader.
 */
function startWorker(): Worker {
  const fromSources = import.meta.url.endsWith('.ts');
  // A page's parsed rows are garbage once hashed: a small young generation collects them early, where the
  // default let each thread's heap grow by a hundred MiB or so before collecting.
  const resourceLimits = { maxYoungGenerationSizeMb: 8 };
  return fromSources
    ? new Worker(new URL('./page-worker.ts', import.meta.url), { execArgv: ['--import', 'tsx'], resourceLimits })
    : new Worker(new URL('./page-worker.js', import.meta.url), { execArgv: [], resourceLimits });
}

type Pending = { resolve: (o: PageOutcome) => void; reject: (e: Error) => void };

class ThreadedRunner implements PageRunner {
  readonly width: number;
  private readonly workers: { worker: Worker; pending: Map<number, Pending> }[] = [];
  private nextId = 0;
  private turn = 0;

  constructor(threads: number) {
    this.width = threads;
    for (let i = 0; i < threads; i++) {
      const pending = new Map<number, Pending>();
      const worker = startWorker();
      worker.on('message', (msg: { id: number; outcome?: PageOutcome; error?: string }) => {
        const p = pending.get(msg.id);
        if (!p) return;
        pending.delete(msg.id);
        if (msg.error !== undefined) p.reject(new Error(msg.error));
        else p.resolve(msg.outcome!);
      });
      const failAll = (err: Error) => {
        for (const p of pending.values()) p.reject(err);
        pending.clear();
      };
      worker.on('error', failAll);
      worker.on('exit', () => failAll(new Error('a hashing thread stopped')));
      this.workers.push({ worker, pending });
    }
  }

  walk(kind: ChainKind, bytes: Uint8Array): Promise<PageOutcome> {
    // Pages go round in turn: they are of equal size, so the threads stay equally busy.
    const w = this.workers[this.turn++ % this.workers.length]!;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      w.pending.set(id, { resolve, reject });
      // Moved, not copied: the page's buffer is its own (copy-pages.ts), and the thread takes it over.
      w.worker.postMessage({ id, kind, buffer: bytes.buffer, offset: bytes.byteOffset, length: bytes.byteLength }, [bytes.buffer as ArrayBuffer]);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }
}
