import type pg from 'pg';
import { appendEvents } from './append.js';
import { beginClaimSql, claimFrom, completeAndCommitSql, idempotencyFor } from './idempotency.js';
import { rebuildProjection, runProjectionBatch } from './projections.js';
import { readSafe, readStreamRows } from './read.js';
import { Upcasters } from './rows.js';
import { sealPending } from './sealer.js';
import type {
  AppendOptions,
  AppendResult,
  IdempotencyClaim,
  IdempotentTransactionOutcome,
  InlineProjection,
  Ledger,
  LedgerTx,
  NewEvent,
  StoredEvent,
  Upcaster,
} from './types.js';
import { readChainHead, verifyChain } from './verify.js';

export interface CreateLedgerOptions {
  pool: pg.Pool;
  upcasters?: Upcaster[];
  /** Applied inside the appending transaction, in registration order. */
  inlineProjections?: InlineProjection[];
  /** @defaultValue () => new Date() */
  now?: () => Date;
}

/** The ledger façade: each concern lives in its own module and shares only the pool, the clock and the upcasters. */
export function createLedger(opts: CreateLedgerOptions): Ledger {
  const { pool } = opts;
  const now = opts.now ?? (() => new Date());
  const upcasters = new Upcasters(opts.upcasters);
  const inline = opts.inlineProjections ?? [];

  const projectionsFor = (events: NewEvent[]): InlineProjection[] =>
    inline.filter((p) => !p.handles || events.some((e) => p.handles?.includes(e.type)));

  async function appendInTx(client: pg.PoolClient, streamId: string, events: NewEvent[], appendOpts: AppendOptions): Promise<AppendResult> {
    const result = await appendEvents(client, streamId, events, appendOpts, now());
    for (const p of projectionsFor(events)) {
      const handled = result.events.filter((e) => !p.handles || p.handles.includes(e.type)).map((e) => upcasters.apply(e));
      await p.apply(client, handled);
    }
    return result;
  }

  const txFor = (client: pg.PoolClient): LedgerTx => ({
    client,
    append: (streamId, events, appendOpts) => appendInTx(client, streamId, events, appendOpts),
    idempotency: idempotencyFor(client),
  });

  /** Runs `body` on a pooled client; any throw rolls back whatever transaction it opened. */
  async function onClient<T>(body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    try {
      return await body(client);
    } catch (err) {
      await client.query('rollback').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  function transaction<T>(fn: (tx: LedgerTx) => Promise<T>): Promise<T> {
    return onClient(async (client) => {
      await client.query('begin');
      const value = await fn(txFor(client));
      await client.query('commit');
      return value;
    });
  }

  function idempotentTransaction<T>(claim: IdempotencyClaim, work: (tx: LedgerTx) => Promise<T>): Promise<IdempotentTransactionOutcome<T>> {
    return onClient(async (client) => {
      const begun = (await client.query(beginClaimSql(client, claim.tenantId, claim.key))) as unknown as pg.QueryResult[];
      const begin = claimFrom(begun, claim.fingerprint);
      if (begin.kind !== 'new') {
        await client.query('rollback');
        return begin;
      }
      const result = await work(txFor(client));
      await client.query(completeAndCommitSql(client, claim.tenantId, claim.key, claim.fingerprint, result));
      return { kind: 'done', result };
    });
  }

  return {
    async append(streamId, events, appendOpts) {
      // No inline projection for these types: the append is a single autocommit statement, one round trip.
      if (projectionsFor(events ?? []).length === 0) return appendEvents(pool, streamId, events, appendOpts, now());
      return transaction((tx) => tx.append(streamId, events, appendOpts));
    },
    transaction,
    idempotentTransaction,
    async readStream(streamId, readOpts) {
      return (await readStreamRows(pool, streamId, readOpts)).map((e) => upcasters.apply(e));
    },
    async readAll(readOpts = {}) {
      const events: StoredEvent[] = await readSafe(pool, readOpts);
      return events.map((e) => upcasters.apply(e));
    },
    verify: () => verifyChain(pool),
    chainHead: () => readChainHead(pool),
    sealPending: (sealOpts) => sealPending(pool, sealOpts?.batchSize),
    runProjection: (p, runOpts) => runProjectionBatch(pool, upcasters, p, runOpts?.batchSize),
    rebuild: (p, rebuildOpts) => rebuildProjection(pool, upcasters, p, rebuildOpts?.batchSize),
  };
}
