import type pg from 'pg';

/** A page of rows as COPY's text format sends them, whole rows only, in a buffer of its own (transferable). */
export interface CopyPage {
  bytes: Uint8Array;
}

/** Pages of one `COPY (…) TO STDOUT`, in order; `next` answers null after the last. */
export interface PageSource {
  next(): Promise<CopyPage | null>;
  /** Stops reading (what is left unread is dropped) and gives the connection back. */
  close(): Promise<void>;
}

/** Pages read ahead of the walk: past this many the socket is paused, so memory holds a few pages at most. */
const READ_AHEAD = 2;
/** A page is cut at this many bytes even when it has fewer rows than asked (events with large payloads). */
const MAX_PAGE_BYTES = 8 * 1024 * 1024;
const NEWLINE = 0x0a;

/**
 * Streams a query's rows with `COPY … TO STDOUT` (text format) and cuts the stream into pages of about
 * `pageSize` rows. One statement, so one snapshot for the whole walk, and PostgreSQL writes each row as plain
 * text with no per-row JSON to build; the rows are copied byte for byte into the page (the driver's buffer is
 * reused under it), and each page is a buffer of its own that can be handed to a hashing thread without a copy.
 *
 * The query runs on a connection of its own taken from the pool (closed early, it is destroyed rather than
 * drained), or on the caller's client (closed early, what is left is read and dropped).
 */
export async function copyPages(db: pg.Pool | pg.PoolClient, sql: string, pageSize: number): Promise<PageSource> {
  const own = !('release' in db);
  const client = own ? await (db as pg.Pool).connect() : (db as pg.PoolClient);
  const copy = new CopyOut(`copy (${sql}) to stdout`, pageSize);
  client.query(copy as unknown as pg.Submittable);
  let closed = false;
  return {
    next: () => copy.next(),
    async close() {
      if (closed) return;
      closed = true;
      if (copy.finished) {
        if (own) (client as pg.PoolClient).release();
        return;
      }
      if (own) {
        copy.abandon();
        (client as pg.PoolClient).release(true);
      } else {
        await copy.drain();
      }
    },
  };
}

type Waiter = { resolve: (p: CopyPage | null) => void; reject: (e: Error) => void };

/** node-pg's submittable protocol (as pg-cursor and pg-query-stream use it) for one COPY TO STDOUT. */
class CopyOut {
  private connection: { query(text: string): void; stream: { pause(): void; resume(): void } } | null = null;
  private page: Buffer | null = null;
  private used = 0;
  private rows = 0;
  private readonly ready: CopyPage[] = [];
  private waiter: Waiter | null = null;
  private error: Error | null = null;
  private done = false;
  private discard = false;
  private whenFinished: (() => void) | null = null;
  finished = false;

  constructor(
    readonly text: string,
    private readonly pageSize: number,
  ) {}

  submit(connection: NonNullable<CopyOut['connection']>): void {
    this.connection = connection;
    connection.query(this.text);
  }

  handleCopyData(msg: { chunk: Buffer }): void {
    if (this.discard) return;
    const chunk = msg.chunk;
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
    if (this.rows >= this.pageSize || this.used >= MAX_PAGE_BYTES) this.cut();
  }

  private cut(): void {
    if (this.rows === 0 || this.page === null) return;
    this.offer({ bytes: this.page.subarray(0, this.used) });
    this.page = null;
    this.used = 0;
    this.rows = 0;
  }

  private offer(page: CopyPage): void {
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w.resolve(page);
      return;
    }
    this.ready.push(page);
    if (this.ready.length >= READ_AHEAD) this.connection?.stream.pause();
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

  handleCommandComplete(): void {
    this.cut();
    this.done = true;
    this.settleWaiter();
  }

  handleReadyForQuery(): void {
    this.finish();
  }

  handleError(err: Error): void {
    this.error ??= err;
    this.done = true;
    this.settleWaiter();
    this.finish();
  }

  private settleWaiter(): void {
    const w = this.waiter;
    if (!w) return;
    this.waiter = null;
    if (this.error) w.reject(this.error);
    else w.resolve(this.ready.shift() ?? null);
  }

  private finish(): void {
    this.finished = true;
    this.connection?.stream.resume();
    this.whenFinished?.();
  }

  /** The connection is about to be destroyed: nothing more is kept, and the socket must not stay paused. */
  abandon(): void {
    this.discard = true;
    this.ready.length = 0;
    this.connection?.stream.resume();
  }

  /** Reads what is left and drops it, so the caller's client is free for its next query. */
  drain(): Promise<void> {
    this.abandon();
    if (this.finished) return Promise.resolve();
    return new Promise((resolve) => {
      this.whenFinished = resolve;
    });
  }

  // Messages a COPY TO never brings; node-pg calls them on any active query.
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
}
