import pg from 'pg';

export interface ListenHandlers {
  /** A notification on the channel, with its payload. */
  onNotify(payload: string): void;
  /**
   * The connection was (re)established: anything notified while nobody listened was missed, so a listener that
   * must not miss work reads its source again now.
   */
  onListening(): void;
  /** The connection failed or could not be made; it is retried every `retryMs`. */
  onError?(err: Error): void;
  /** LISTEN took effect on a new connection: from now on every committed NOTIFY is heard. */
  onConnected?(): void;
  /** The connection was lost: until `onConnected`, notifications may be missed. */
  onLost?(): void;
}

export interface PgListener {
  close(): Promise<void>;
}

/**
 * LISTEN on one channel over a dedicated connection made with the pool's settings, reconnecting when it drops.
 * NOTIFY is delivered only when the notifying transaction commits, so a listener hears of committed work only;
 * it is a wake-up, never the work itself: whoever listens reads the database after each one.
 */
export function listen(pool: pg.Pool, channel: string, handlers: ListenHandlers, opts: { retryMs?: number } = {}): PgListener {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new Error('a channel name is a lower-case identifier');
  const retryMs = opts.retryMs ?? 1_000;
  let client: pg.Client | null = null;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;

  const retry = () => {
    if (!closed) timer = setTimeout(() => void connect(), retryMs);
  };

  async function connect(): Promise<void> {
    if (closed) return;
    const c = new pg.Client(pool.options as pg.ClientConfig);
    c.on('notification', (msg) => {
      if (msg.channel === channel) handlers.onNotify(msg.payload ?? '');
    });
    const lost = (err?: Error) => {
      if (client !== c) return;
      client = null;
      handlers.onLost?.();
      if (err) handlers.onError?.(err);
      handlers.onListening();
      retry();
    };
    c.on('error', lost);
    c.on('end', () => lost());
    try {
      await c.connect();
      await c.query(`listen ${channel}`);
      if (closed) {
        // Closed while connecting: this connection is nobody's and must not outlive the close.
        await c.end().catch(() => undefined);
        return;
      }
      client = c;
      handlers.onConnected?.();
      handlers.onListening();
    } catch (err) {
      await c.end().catch(() => undefined);
      handlers.onError?.(err as Error);
      retry();
    }
  }
  const started = connect();

  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      await started;
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}
