import type pg from 'pg';

/** A page of rows as COPY's text format sends them, whole rows only, in a buffer of its own (transferable). */
export interface CopyPage {
  bytes: Uint8Array;
}

/** Pages of a walk's rows, in order; `next` answers null after the last. */
export interface PageSource {
  next(): Promise<CopyPage | null>;
  /** Stops reading (what is left unread is dropped) and gives the connection back. */
  close(): Promise<void>;
}

/**
 * The rows after `after` (the first column is the row's sequence number, ascending), at most `limit` of them:
 * a keyset query, whose LIMIT keeps PostgreSQL on an index scan that streams in order rather than a hash join
 * and a sort of the whole chain that sends nothing until it is done.
 */
export type ChunkQuery = (after: number, limit: number) => string;

/** Pages read ahead of the walk: past this many the socket is paused, so memory holds a few pages at most. */
const READ_AHEAD = 2;
/** A page is cut at this many bytes even when it has fewer rows than asked (events with large payloads). */
const MAX_PAGE_BYTES = 8 * 1024 * 1024;
/** Pages one COPY statement reads. */
const PAGES_PER_CHUNK = 10;
const NEWLINE = 0x0a;
const TAB = 0x09;

/**
 * Streams a walk's rows with `COPY (…) TO STDOUT` (text format), one statement per chunk of PAGES_PER_CHUNK
 * pages, each chunk starting after the last row of the one before, and cuts the stream into pages of about
 * `pageSize` rows. PostgreSQL writes each row as plain text (no per-row JSON to build); the rows are copied byte
 * for byte into the page (the driver's buffer is reused under it), and each page is a buffer of its own that can
 * be handed to a hashing thread without a copy.
 *
 * The statements run on a connection of its own taken from the pool (closed early, it is destroyed rather than
 * drained), or on the caller's client (closed early, what is left of the current statement is read and dropped).
 */
export async function copyPages(db: pg.Pool | pg.PoolClient, query: ChunkQuery, after: number, pageSize: number): Promise<PageSource> {
  const own = !('release' in db);
  const client = own ? await (db as pg.Pool).connect() : (db as pg.PoolClient);
  let restore: string;
  try {
    restore = await serialPlans(client);
  } catch (err) {
    if (own) (client as pg.PoolClient).release(true);
    throw err;
  }
  const pager = new Pager(client, query, Math.max(1, pageSize));
  pager.start(after);
  let closed = false;
  return {
    next: () => pager.next(),
    async close() {
      if (closed) return;
      closed = true;
      if (own && !pager.finished) {
        pager.abandon();
        (client as pg.PoolClient).release(true);
        return;
      }
      if (!pager.finished) await pager.drain();
      try {
        await client.query(restore);
      } catch (err) {
        // A client in an aborted transaction refuses the query; its rollback undoes the SET all the same.
        if (own) {
          (client as pg.PoolClient).release(true);
          return;
        }
        if (!isAbortedTransaction(err)) throw err;
      }
      if (own) (client as pg.PoolClient).release();
    },
  };
}

/**
 * No parallel workers for the walk's statements: with them PostgreSQL planned each chunk as a Gather Merge over
 * two workers, three processes for one ordered stream, which took the cores the hashing threads need and sent
 * the rows no sooner (EXPLAIN ANALYZE of a 50,000-link chunk: 203 ms in parallel, 106 ms serial). The session's
 * setting is put back on close; the statement that does so is answered.
 */
async function serialPlans(client: pg.ClientBase): Promise<string> {
  const { rows } = await client.query<{ v: string }>(`select current_setting('max_parallel_workers_per_gather') as v`);
  await client.query('set max_parallel_workers_per_gather = 0');
  return `set max_parallel_workers_per_gather = ${pgInteger(rows[0]!.v)}`;
}

function pgInteger(text: string): string {
  if (!/^\d{1,9}$/.test(text)) throw new RangeError('max_parallel_workers_per_gather is not a small integer');
  return text;
}

function isAbortedTransaction(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '25P02';
}

type Waiter = { resolve: (p: CopyPage | null) => void; reject: (e: Error) => void };
type Connection = { query(text: string): void; stream: { pause(): void; resume(): void } };

/** Builds pages from the chunks' rows and hands them out in order, pausing the socket when the walk lags. */
class Pager {
  private connection: Connection | null = null;
  private page: Buffer | null = null;
  private used = 0;
  private rows = 0;
  private chunkRows = 0;
  private lastSeq = 0;
  private readonly ready: CopyPage[] = [];
  private waiter: Waiter | null = null;
  private error: Error | null = null;
  private done = false;
  private discard = false;
  private whenFinished: (() => void) | null = null;
  finished = false;

  constructor(
    private readonly client: pg.ClientBase,
    private readonly query: ChunkQuery,
    private readonly pageSize: number,
  ) {}

  start(after: number): void {
    this.chunkRows = 0;
    this.lastSeq = after;
    this.client.query(new CopyChunk(`copy (${this.query(after, this.pageSize * PAGES_PER_CHUNK)}) to stdout`, this) as unknown as pg.Submittable);
  }

  attach(connection: Connection): void {
    this.connection = connection;
  }

  row(chunk: Buffer): void {
    if (this.discard) return;
    if (this.page === null) this.page = Buffer.allocUnsafeSlow(Math.max(1024 * 1024, chunk.length));
    if (this.used + chunk.length > this.page.length) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(this.page.length * 2, this.used + chunk.length));
      bigger.set(this.page.subarray(0, this.used));
      this.page = bigger;
    }
    this.page.set(chunk, this.used);
    this.used += chunk.length;
    // PostgreSQL sends a COPY's rows one to a message, each ending in its only raw newline (one inside a value
    // is escaped): a message that ends in one ends a row, and a page is cut only there. Were several rows sent in
    // one message, the page would only hold more than `pageSize` rows; the hashing thread counts them itself.
    if (chunk[chunk.length - 1] !== NEWLINE) return;
    this.rows += 1;
    this.chunkRows += 1;
    this.lastSeq = leadingNumber(chunk, chunk.lastIndexOf(NEWLINE, chunk.length - 2) + 1);
    if (this.rows >= this.pageSize || this.used >= MAX_PAGE_BYTES) this.cut();
  }

  /** A chunk is complete: a full one is followed by the next, a short one was the last. */
  chunkDone(): void {
    if (this.discard || this.error) return;
    if (this.chunkRows >= this.pageSize * PAGES_PER_CHUNK) {
      this.start(this.lastSeq);
      return;
    }
    this.cut();
    this.done = true;
    this.settleWaiter();
  }

  chunkReady(): void {
    if (this.done || this.error || this.discard) this.finish();
  }

  failed(err: Error): void {
    this.error ??= err;
    this.done = true;
    this.settleWaiter();
    this.finish();
  }

  next(): Promise<CopyPage | null> {
    const page = this.ready.shift();
    if (page) {
      if (this.ready.length < READ_AHEAD) this.connection?.stream.resume();
      return Promise.resolve(page);
    }
    if (this.error) return Promise.reject(this.error);
    if (this.done) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** The connection is about to be destroyed: nothing more is kept, and the socket must not stay paused. */
  abandon(): void {
    this.discard = true;
    this.ready.length = 0;
    this.connection?.stream.resume();
  }

  /** Reads what is left of the current statement and drops it, so the caller's client is free again. */
  drain(): Promise<void> {
    this.abandon();
    if (this.finished) return Promise.resolve();
    return new Promise((resolve) => {
      this.whenFinished = resolve;
    });
  }

  private cut(): void {
    if (this.rows === 0 || this.page === null) return;
    const page = { bytes: this.page.subarray(0, this.used) };
    this.page = null;
    this.used = 0;
    this.rows = 0;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w.resolve(page);
      return;
    }
    this.ready.push(page);
    if (this.ready.length >= READ_AHEAD) this.connection?.stream.pause();
  }

  private settleWaiter(): void {
    const w = this.waiter;
    if (!w) return;
    this.waiter = null;
    if (this.error) w.reject(this.error);
    else w.resolve(this.ready.shift() ?? null);
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.connection?.stream.resume();
    this.whenFinished?.();
  }
}

/** The unsigned decimal number a row starts with (its sequence number, up to the first tab). */
function leadingNumber(bytes: Buffer, start: number): number {
  let n = 0;
  for (let i = start; i < bytes.length && bytes[i] !== TAB; i++) n = n * 10 + (bytes[i]! - 0x30);
  return n;
}

/** node-pg's submittable protocol (as pg-cursor and pg-query-stream use it) for one COPY … TO STDOUT. */
class CopyChunk {
  constructor(
    readonly text: string,
    private readonly pager: Pager,
  ) {}

  submit(connection: Connection): void {
    this.pager.attach(connection);
    connection.query(this.text);
  }

  handleCopyData(msg: { chunk: Buffer }): void {
    this.pager.row(msg.chunk);
  }

  handleCommandComplete(): void {
    this.pager.chunkDone();
  }

  handleReadyForQuery(): void {
    this.pager.chunkReady();
  }

  handleError(err: Error): void {
    this.pager.failed(err);
  }

  // Messages a COPY TO never brings; node-pg calls them on any active query.
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
}
