import type pg from 'pg';
import { ItoError } from '@ito/contracts';
import { appendEvents } from './append.js';
import { appendStreams, validateMany } from './append-many.js';
import { beginClaimSql, claimFrom, completeAndCommitSql, idempotencyFor } from './idempotency.js';
import { catchUpProjection } from './projection-catch-up.js';
import { rebuildProjection, runProjectionBatch } from './projections.js';
import { readSafe, readStreamRows } from './read.js';
import { Upcasters } from './rows.js';
import { sealPending } from './sealer.js';
import type {
  AppendOptions,
  AnyEvents,
  AppendResult,
  EventMap,
  IdempotencyClaim,
  IdempotentTransactionOutcome,
  InlineProjection,
  Ledger,
  LedgerTx,
  NewEvent,
  NewEventOf,
  StoredEvent,
  StreamAppend,
  StreamRule,
  Upcaster,
} from './types.js';
import { validateAppend } from './validate.js';
import { readChainHead, verifyChain } from './verify.js';

export interface CreateLedgerOptions {
  pool: pg.Pool;
  upcasters?: Upcaster[];
  /** Applied inside the appending transaction, in registration order. */
  inlineProjections?: InlineProjection<AnyEvents>[];
  /** Every append to a stream one of these owns passes through it first (the first that owns the stream). */
  streamRules?: StreamRule<any>[];
  /** @defaultValue () => new Date() */
  now?: () => Date;
}

/** The ledger façade: each concern lives in its own module and shares only the pool, the clock and the upcasters. */
export function createLedger(opts: CreateLedgerOptions): Ledger {
  const { pool } = opts;
  const now = opts.now ?? (() => new Date());
  const upcasters = new Upcasters(opts.upcasters);
  const inline = opts.inlineProjections ?? [];
  const rules = opts.streamRules ?? [];

  const projectionsFor = (events: readonly { type: string }[]): InlineProjection<AnyEvents>[] =>
    inline.filter((p) => !p.handles || events.some((e) => p.handles?.includes(e.type)));
  const ruleFor = (streamId: string): StreamRule | undefined => rules.find((r) => r.owns(streamId));

  /** The events the stream's rule (if one owns it) completes the append with: what is written. */
  async function completeByRule(client: pg.PoolClient, streamId: string, given: readonly NewEvent[], appendOpts: AppendOptions): Promise<readonly NewEvent[]> {
    const rule = ruleFor(streamId);
    if (!rule) return given;
    // The rule reads and decides on what it is handed: only a well-formed append of its own types reaches it.
    validateAppend(streamId, given, appendOpts);
    if (!given.every((e) => rule.types.includes(e.type))) {
      throw new ItoError('validation_failed', `the append holds an event of a type the ${rule.name} streams do not hold`);
    }
    return rule.complete(client, streamId, given, appendOpts);
  }

  /** Each inline projection that handles any of `written`'s events, once, on those events in order. */
  async function project(client: pg.PoolClient, written: readonly StoredEvent[]): Promise<void> {
    for (const p of projectionsFor(written)) {
      const handled = written.filter((e) => !p.handles || p.handles.includes(e.type)).map((e) => upcasters.apply(e));
      await p.apply(client, handled);
    }
  }

  async function appendInTx(client: pg.PoolClient, streamId: string, given: readonly NewEvent[], appendOpts: AppendOptions): Promise<AppendResult> {
    const events = await completeByRule(client, streamId, given, appendOpts);
    const result = await appendEvents(client, streamId, events, appendOpts, now());
    await project(client, result.events);
    return result;
  }

  async function appendManyInTx(client: pg.PoolClient, appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    validateMany(appends);
    const completed: StreamAppend[] = [];
    for (const a of appends) completed.push({ ...a, events: await completeByRule(client, a.streamId, a.events, a.opts) });
    const results = await appendStreams(client, completed, now());
    await project(client, results.flatMap((r) => r.events));
    return results;
  }

  const txFor = (client: pg.PoolClient): LedgerTx => ({
    client,
    append: async (streamId, events, appendOpts) => asTyped(await appendInTx(client, streamId, asStored(events), appendOpts)),
    appendMany: async (appends) => (await appendManyInTx(client, appends)) as never,
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
    async append(streamId, typed, appendOpts) {
      const events = asStored(typed);
      // No stream rule and no inline projection for these types: a single autocommit statement, one round trip.
      if (!ruleFor(streamId) && projectionsFor(events ?? []).length === 0) return asTyped(await appendEvents(pool, streamId, events, appendOpts, now()));
      return transaction((tx) => tx.append(streamId, typed, appendOpts));
    },
    async appendMany(appends) {
      // No stream rule and no inline projection involved: a single autocommit statement, one round trip.
      validateMany(appends);
      const plain = appends.every((a) => !ruleFor(a.streamId) && projectionsFor(a.events).length === 0);
      if (plain) return (await appendStreams(pool, appends, now())) as never;
      return transaction((tx) => tx.appendMany(appends));
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
    catchUpProjection: (p, catchUpOpts) => catchUpProjection(pool, upcasters, p, catchUpOpts),
    rebuild: (p, rebuildOpts) => rebuildProjection(pool, upcasters, p, rebuildOpts?.batchSize),
  };
}

/**
 * Where typed events become stored JSON: a map only narrows what a caller may hand in, every event of any map is
 * a type and a JSON object when written, so the ledger below this line works on the untyped shape.
 */
function asStored<M extends EventMap>(events: readonly NewEventOf<M>[]): NewEvent[] {
  return events as readonly NewEvent[] as NewEvent[];
}

/** And back: what was written is what the caller handed in under its map (and what a stream rule of that map added). */
function asTyped<M extends EventMap>(result: AppendResult): AppendResult<M> {
  return result as unknown as AppendResult<M>;
}
