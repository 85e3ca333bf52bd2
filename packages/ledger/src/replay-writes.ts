import type pg from 'pg';
import { inlineParameters, isBlindWrite, literalOf, singleRowInsert } from './replay-sql.js';

/** Flushed once this many writes or this much statement text wait, so memory stays bounded within a batch. */
const MAX_WAITING = 2000;
const MAX_WAITING_CHARS = 8 * 1024 * 1024;

type QueryArgs = [text: string | pg.QueryConfig, values?: unknown[], callback?: unknown];

/**
 * The client a replay hands its projections, writing to scratch tables: a write whose answer the projection
 * cannot use (INSERT, UPDATE or DELETE without RETURNING) resolves at once, with no rows and a null rowCount,
 * and waits; consecutive single-row INSERTs of one statement become one multi-row INSERT; and whatever waits
 * is sent in one round trip, in order, before the projection's next read and at the end of each batch. So a
 * batch's rows are written in bulk instead of one round trip per row, with the effects of the statements one
 * by one. Every other call goes to the connection as it was.
 */
export class DeferredWrites {
  private waiting: { text: string; rows: string[] | null; head?: string; tail?: string }[] = [];
  private waitingChars = 0;
  readonly client: pg.ClientBase;

  constructor(private readonly real: pg.Client) {
    this.client = new Proxy(real, {
      get: (target, prop, receiver) => {
        if (prop === 'query') return (...args: QueryArgs) => this.query(...args);
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    }) as pg.ClientBase;
  }

  /** Sends whatever waits, in one round trip. */
  async flush(): Promise<void> {
    if (this.waiting.length === 0) return;
    const statements = this.waiting.map((w) => (w.rows ? `${w.head}${w.rows.join(', ')}${w.tail}` : w.text));
    this.waiting = [];
    this.waitingChars = 0;
    await this.real.query(statements.join(';\n'));
  }

  private async query(...args: QueryArgs): Promise<unknown> {
    const [first, second, callback] = args;
    const config: pg.QueryConfig = typeof first === 'string' ? { text: first, values: second ?? [] } : first;
    const deferred = callback === undefined && !('submit' in (config as object)) && !('rowMode' in config) && !('types' in config) ? this.inline(config) : null;
    if (deferred === null) {
      await this.flush();
      return (this.real.query as (...a: unknown[]) => unknown)(...args);
    }
    this.defer(config.text, deferred);
    if (this.waiting.length >= MAX_WAITING || this.waitingChars >= MAX_WAITING_CHARS) await this.flush();
    return { command: config.text.trim().split(/\s/, 1)[0]!.toUpperCase(), rowCount: null, oid: 0, fields: [], rows: [] };
  }

  /** The statement with its values written in, or null when it must be sent as it is. */
  private inline(config: pg.QueryConfig): { literals: string[] } | null {
    if (!isBlindWrite(config.text)) return null;
    const literals: string[] = [];
    for (const v of config.values ?? []) {
      const literal = literalOf(v, (s) => this.real.escapeLiteral(s));
      if (literal === null) return null;
      literals.push(literal);
    }
    return inlineParameters(config.text, literals) === null ? null : { literals };
  }

  private defer(text: string, { literals }: { literals: string[] }): void {
    const insert = singleRowInsert(text);
    const last = this.waiting.at(-1);
    if (insert) {
      const row = inlineParameters(insert.row, literals)!;
      this.waitingChars += row.length + 2;
      if (last?.rows && last.text === text) last.rows.push(row);
      else this.waiting.push({ text, rows: [row], head: insert.head, tail: insert.tail });
      return;
    }
    const statement = inlineParameters(text, literals)!;
    this.waitingChars += statement.length + 2;
    this.waiting.push({ text: statement, rows: null });
  }
}
