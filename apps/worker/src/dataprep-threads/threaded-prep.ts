import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { DataPrep, type Battery, type DataPrepParams, type DataPrepSummary, type DeepPartial, type DocAnalysis, type Verdict } from '@ito/dataprep';
import { unpackAnalyses, type PackedAnalyses } from './packed.js';

/** One thread per core, at most four: past that, reading and the in-order decisions on this thread are the limit. */
export function defaultDataPrepThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

type Pending = { resolve: (a: DocAnalysis[]) => void; reject: (e: Error) => void };

/**
 * `DataPrep` with the per-document work (everything in a `DocAnalysis`) spread over worker threads and the
 * order-dependent decisions (exact and near dedup lookups, exact-Jaccard verification) taken here, in input order:
 * the verdicts are those of `DataPrep.consider` whatever the thread count. Memory: one batch of texts in flight
 * per call, the battery index and token-hash cache once per thread, and the dedup state on this thread as before.
 * The threads run until {@link close}.
 */
export class ThreadedDataPrep {
  private readonly threads: { worker: Worker; pending: Map<number, Pending> }[] = [];
  private nextId = 0;
  /** The last batch's decisions: each batch's wait for the one before it, so ordinals follow the calls' order. */
  private tail: Promise<unknown> = Promise.resolve();
  private sent = 0;

  private constructor(
    private readonly prep: DataPrep,
    battery: Battery,
    threads: number,
  ) {
    for (let i = 0; i < threads; i++) this.threads.push(startThread(battery, prep.params));
  }

  static async create(battery: Battery, threads = defaultDataPrepThreads(), overrides: DeepPartial<DataPrepParams> = {}): Promise<ThreadedDataPrep> {
    if (!Number.isInteger(threads) || threads < 1) throw new RangeError('threads must be a positive integer');
    return new ThreadedDataPrep(await DataPrep.create(battery, overrides), battery, threads);
  }

  get params(): DataPrepParams {
    return this.prep.params;
  }

  /**
   * The verdicts of a batch of documents whose exact digests were taken from their lines' bytes (`lineDigest`), in
   * order: the next ordinals, as `DataPrep.consider` would give them for their texts. Exact dedup is decided now, on
   * this thread, and an exact duplicate goes no further; `textOf(i)` is called (now, in order) only for the documents
   * it kept, and only their texts go to the threads. A caller may submit the next batch before this one is answered
   * (the threads then work while it reads); batches are decided in the order they were submitted whatever order the
   * threads finish in.
   */
  considerDigested(digests: readonly string[], textOf: (i: number) => string): Promise<Verdict[]> {
    const verdicts = digests.map((d) => this.prep.considerDigest(d));
    const passed: number[] = [];
    const texts: string[] = [];
    verdicts.forEach((v, i) => {
      if (!v.kept) return;
      passed.push(i);
      texts.push(textOf(i));
    });
    this.sent += texts.length;
    const slices = this.spread(texts);
    const decided = this.tail.then(async () => {
      (await Promise.all(slices)).flat().forEach((a, k) => {
        const i = passed[k]!;
        verdicts[i] = this.prep.considerAnalyzedAfterExact(verdicts[i]!.ordinal, a);
      });
      return verdicts;
    });
    // A failed batch fails its caller; the next batch still waits for it, then goes on.
    this.tail = decided.catch(() => undefined);
    return decided;
  }

  /** Equal slices, one per thread, so the threads finish together. */
  private spread(texts: readonly string[]): Promise<DocAnalysis[]>[] {
    const size = Math.max(1, Math.ceil(texts.length / this.threads.length));
    const slices: Promise<DocAnalysis[]>[] = [];
    for (let i = 0, t = 0; i < texts.length; i += size, t++) slices.push(this.analyze(this.threads[t]!, texts.slice(i, i + size)));
    return slices;
  }

  /** Resolves once every thread has built its analyser (battery index, token hasher) and answered an empty batch. */
  async ready(): Promise<void> {
    await Promise.all(this.threads.map((t) => this.analyze(t, [])));
  }

  /** Documents whose texts went to the threads through {@link considerDigested}: those exact dedup did not remove. */
  get sentToThreads(): number {
    return this.sent;
  }

  summary(): DataPrepSummary {
    return this.prep.summary();
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }

  private analyze(thread: { worker: Worker; pending: Map<number, Pending> }, texts: string[]): Promise<DocAnalysis[]> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage({ id, texts });
    });
  }
}

/**
 * The thread's module beside this one: compiled JavaScript once built, started with none of the parent's flags;
 * run from the TypeScript sources (the tests do), it is the .ts file and needs a TypeScript loader.
 */
function startThread(battery: Battery, params: DataPrepParams): { worker: Worker; pending: Map<number, Pending> } {
  const fromSources = import.meta.url.endsWith('.ts');
  const workerData = { battery, params };
  const worker = fromSources
    ? new Worker(new URL('./prep-worker.ts', import.meta.url), { execArgv: ['--import', 'tsx'], workerData })
    : new Worker(new URL('./prep-worker.js', import.meta.url), { execArgv: [], workerData });
  const pending = new Map<number, Pending>();
  worker.on('message', (msg: { id: number; packed?: PackedAnalyses; error?: string }) => {
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (msg.error !== undefined) p.reject(new Error(msg.error));
    else p.resolve(unpackAnalyses(msg.packed!));
  });
  const failAll = (err: Error) => {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  worker.on('error', failAll);
  worker.on('exit', () => failAll(new Error('a data-prep thread stopped')));
  return { worker, pending };
}
