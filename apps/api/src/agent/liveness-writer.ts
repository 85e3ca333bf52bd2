import type pg from 'pg';
import type { GpuHealth } from '@ito/contracts';

/** One heartbeat as the liveness table keeps it: the node, when, its GPUs, and how far its running task got. */
export interface Beat {
  node_id: string;
  tenant_id: string;
  at: Date;
  health: GpuHealth[];
  /** `health` as the JSON text the agent sent it, when known: stored as is rather than serialised again. */
  healthText?: string;
  task: { task_id: string; attempt: number; step: number | null } | null;
}

/**
 * Writes heartbeats to the UNLOGGED `node_liveness` table in batches: while an upsert is in flight the next
 * beats gather, and the next upsert writes them all in one statement (the newest beat per node wins); at most
 * `statements` upserts are in flight at once, and a node's beat is never in two of them. A beat's
 * promise settles when the statement that carried it committed, so an answered heartbeat is a recorded one,
 * and a fleet costs one statement per flush rather than one per node.
 *
 * Statements also start at least `minGapMs` apart, unless `fullBatch` beats are already waiting: a beat that
 * arrives sooner after the last statement began waits for the gap with the beats that join it. A statement's
 * fixed cost is most of a small one's: the upsert of 16 beats cost ≈ 16 µs of PostgreSQL CPU and ≈ 10 µs of the
 * API's per beat, of 64–256 beats ≈ 10 and ≈ 5 (test/bench/README.md, heartbeats, "beat cost"), and without the
 * gap a fleet beating at a steady rate got about one statement per request while PostgreSQL kept up. The price is
 * at most `minGapMs` more before a beat is answered, only when statements follow each other that closely; a
 * statement that takes longer than the gap is followed at once.
 */
export interface LivenessWriter {
  record(beat: Beat): Promise<void>;
  /** Several beats (a host's batch), settled together once every one of them is written: one promise, not one each. */
  recordAll(beats: readonly Beat[]): Promise<void>;
  close(): Promise<void>;
}

export interface LivenessWriterOptions {
  /** The least time between the starts of two statements. @defaultValue 5 ms */
  minGapMs: number;
  /** Beats waiting that start the next statement without waiting out the gap. @defaultValue 256 */
  fullBatch: number;
  /** Statements in flight at once (each on its own pooled connection). @defaultValue 2 */
  statements: number;
}

/**
 * Two statements: with one, a beat that came while PostgreSQL was answering late waited for that statement and
 * then its own, and the 512 beats admitted in flight capped what a process answered (in-flight ÷ latency).
 * 5 ms: at most 200 statements a second, ≈ 20 beats each at 4,000 beats/s, 64 from 12,800/s (where the cost per
 * beat stops falling) and the full 256 from 51,200/s; ≤ 5 ms of the 50 ms p99 goal (10 ms saved ≈ 2.5 µs a beat
 * more at 4,000 beats/s, for twice the wait).
 */
export const DEFAULT_LIVENESS_WRITER: LivenessWriterOptions = { minGapMs: 5, fullBatch: 256, statements: 2 };

const MAX_BATCH = 2_000;

/** Between two beats' values in one text parameter: U+0001, never raw in JSON text nor in an id. */
const VALUE_SEPARATOR = '\u0001';

/** Those waiting on a write: `left` beats of theirs still to be written; told once, of the first failure or of the last write. */
type Waiter = { left: number; resolve: () => void; reject: (e: unknown) => void };

const written = (w: Waiter) => {
  if (--w.left === 0) w.resolve();
};
const failed = (w: Waiter, err: unknown) => {
  if (w.left > 0) {
    w.left = 0;
    w.reject(err);
  }
};

export function createLivenessWriter(pool: pg.Pool, given: Partial<LivenessWriterOptions> = {}): LivenessWriter {
  const options: LivenessWriterOptions = { ...DEFAULT_LIVENESS_WRITER, ...given };
  let pending = new Map<string, { beat: Beat; waiters: Waiter[] }>();
  /** Nodes whose beat a statement in flight carries: a newer beat of theirs waits for that statement's end. */
  const writing = new Set<string>();
  /** Statements in flight, and the one chain waiting out the gap: at most `statements`. */
  const chains = new Set<Promise<void>>();
  let lastStart = Number.NEGATIVE_INFINITY;

  const writeOne = async (): Promise<void> => {
    const batch: Array<{ beat: Beat; waiters: Waiter[] }> = [];
    for (const entry of pending.values()) {
      // One statement at a time per node: its beats are written in the order they came, and two statements never
      // wait on each other's rows (each would lock in its own order).
      if (writing.has(entry.beat.node_id)) continue;
      batch.push(entry);
      if (batch.length === MAX_BATCH) break;
    }
    if (batch.length === 0) return;
    for (const entry of batch) {
      pending.delete(entry.beat.node_id);
      writing.add(entry.beat.node_id);
    }
    lastStart = performance.now();
    try {
      await upsertBeats(pool, batch.map((b) => b.beat));
      for (const entry of batch) for (const w of entry.waiters) written(w);
    } catch (err) {
      for (const entry of batch) for (const w of entry.waiters) failed(w, err);
    } finally {
      for (const entry of batch) writing.delete(entry.beat.node_id);
    }
  };
  const writable = () => {
    for (const node of pending.keys()) if (!writing.has(node)) return true;
    return false;
  };
  // A chain waits out the gap since the last statement began (cut short once a full batch waits), writes one
  // statement, and kicks again while beats are waiting. Up to `statements` chains at once, only one of them in its
  // gap: when PostgreSQL answers a statement late (a busy machine), the beats gathered meanwhile go in the next one
  // at once instead of waiting for it, so they are not held for two statements. `chains` covers the wait too, so
  // close() waits for beats held by the gap.
  let wake: (() => void) | null = null;
  const kick = () => {
    if (wake) {
      if (pending.size >= options.fullBatch) wake();
      return;
    }
    if (chains.size >= options.statements || !writable()) return;
    const wait = pending.size >= options.fullBatch ? 0 : lastStart + options.minGapMs - performance.now();
    const gap =
      wait > 0
        ? new Promise<void>((resolve) => {
            const timer = setTimeout(() => wake?.(), wait);
            wake = () => {
              wake = null;
              clearTimeout(timer);
              resolve();
            };
          })
        : Promise.resolve();
    const chain: Promise<void> = gap.then(writeOne).finally(() => {
      chains.delete(chain);
      if (pending.size > 0) kick();
    });
    chains.add(chain);
  };

  const recordAll = (beats: readonly Beat[]): Promise<void> => {
    if (beats.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { left: beats.length, resolve, reject };
      for (const beat of beats) {
        const entry = pending.get(beat.node_id);
        // A newer beat of the same node replaces one not yet written; both callers learn of the one write.
        if (entry) {
          entry.beat = beat.at >= entry.beat.at ? beat : entry.beat;
          entry.waiters.push(waiter);
        } else pending.set(beat.node_id, { beat, waiters: [waiter] });
      }
      kick();
    });
  };

  return {
    record: (beat) => recordAll([beat]),
    recordAll,
    async close() {
      while (chains.size > 0) await Promise.all(chains);
      pending = new Map();
    },
  };
}

/**
 * One statement for a batch. `step` only moves forward within one task attempt; `progress_at` moves when the
 * step does (or when a new task attempt begins, or the first step is reported); `step_s` is a moving average of
 * seconds per step between moves. A beat without a step (no trainer reporting steps) clears step: there is then
 * nothing to judge a hang on. It clears `progress_at` too, unless it names the same task attempt (a trainer that
 * ended and is delivering its last reports): then `progress_at` stays, as the mark that the attempt reached a
 * step, so the start-up allowance never judges it. A beat older than the newest one recorded (a resend that
 * arrived late) moves nothing back.
 */
export async function upsertBeats(db: Pick<pg.Pool, 'query'>, beats: Beat[]): Promise<void> {
  if (beats.length === 0) return;
  // The beats of one request share one Date, and a request's beats are consecutive in a batch: each run of one
  // Date is one timestamp, and each beat names its timestamp by position ($8, 1-based). PostgreSQL then parses
  // a timestamp per request instead of one per beat (its input function was ≈ a tenth of the backend's CPU per
  // beat), and the API makes one ISO text per request.
  const times: string[] = [];
  const timeOf = new Array<number>(beats.length);
  let lastAt: Date | null = null;
  for (let i = 0; i < beats.length; i++) {
    const at = beats[i]!.at;
    if (at !== lastAt) {
      times.push(at.toISOString());
      lastAt = at;
    }
    timeOf[i] = times.length;
  }
  await db.query({
    name: 'ito_liveness_upsert',
    text: `insert into node_liveness as l (node_id, tenant_id, last_heartbeat_at, health, task_id, attempt, step, progress_at, step_s)
           select b.node_id, b.tenant_id, b.at, b.health, b.task_id, b.attempt, b.step, b.at, null
           from (select x.node_id, x.tenant_id, ($3::timestamptz[])[x.at_index] as at, x.health, x.task_id, x.attempt, x.step
                 from rows from (unnest(string_to_array($1::text, chr(1))), unnest(string_to_array($2::text, chr(1))), unnest($8::int[]),
                                 unnest(string_to_array($4::text, chr(1))), unnest($5::text[]), unnest($6::int[]), unnest($7::int[]))
                   as x(node_id, tenant_id, at_index, health, task_id, attempt, step)) b
           on conflict (node_id) do update set
             last_heartbeat_at = greatest(l.last_heartbeat_at, excluded.last_heartbeat_at),
             health = case when excluded.last_heartbeat_at < l.last_heartbeat_at then l.health else excluded.health end,
             task_id = case when excluded.last_heartbeat_at < l.last_heartbeat_at then l.task_id else excluded.task_id end,
             attempt = case when excluded.last_heartbeat_at < l.last_heartbeat_at then l.attempt else excluded.attempt end,
             step = case
               when excluded.last_heartbeat_at < l.last_heartbeat_at then l.step
               when excluded.step is null then null
               when l.task_id is not distinct from excluded.task_id and l.attempt is not distinct from excluded.attempt
                 then greatest(l.step, excluded.step)
               else excluded.step end,
             progress_at = case
               when excluded.last_heartbeat_at < l.last_heartbeat_at then l.progress_at
               when excluded.step is null and l.task_id is not distinct from excluded.task_id and l.attempt is not distinct from excluded.attempt then l.progress_at
               when excluded.step is null then null
               when l.task_id is distinct from excluded.task_id or l.attempt is distinct from excluded.attempt then excluded.last_heartbeat_at
               when l.step is null or excluded.step > l.step then excluded.last_heartbeat_at
               else l.progress_at end,
             step_s = case
               when excluded.last_heartbeat_at < l.last_heartbeat_at then l.step_s
               when l.task_id is distinct from excluded.task_id or l.attempt is distinct from excluded.attempt then null
               when excluded.step > l.step and l.progress_at is not null then
                 coalesce(l.step_s * 0.7, 0) + (case when l.step_s is null then 1 else 0.3 end)
                   * extract(epoch from (excluded.last_heartbeat_at - l.progress_at)) / (excluded.step - l.step)
               else l.step_s end`,
    values: [
      // Ids as one text each, split at U+0001 like the health below: ids are minted by the API ([a-z0-9_]), so
      // nothing to escape, where a text[] literal had the driver escape every element and PostgreSQL unquote it.
      beats.map((b) => b.node_id).join(VALUE_SEPARATOR),
      beats.map((b) => b.tenant_id).join(VALUE_SEPARATOR),
      times,
      // Every beat's health JSON in one text, split at U+0001, which JSON text never holds raw (outside strings
      // only whitespace may stand between tokens; inside them a control character is escaped): nothing to escape
      // element by element as an array literal would need, and the bytes sent are the JSON's own (the health is
      // most of a beat's bytes). Kept as `text`: the API checked this JSON already (schema.ts, nodeLiveness);
      // `json` made PostgreSQL lex every byte again, and `jsonb` rebuilt each document. A beat's health text,
      // when the agent's own bytes are at hand, goes in as sent (gpus-text.ts).
      beats.map((b) => b.healthText ?? JSON.stringify(b.health)).join(VALUE_SEPARATOR),
      beats.map((b) => b.task?.task_id ?? null),
      beats.map((b) => b.task?.attempt ?? null),
      beats.map((b) => b.task?.step ?? null),
      timeOf,
    ],
  });
}
