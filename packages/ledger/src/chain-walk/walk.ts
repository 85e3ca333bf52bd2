import type pg from 'pg';
import { linkFailure, type ChainRules, type LinkState, type PageOutcome } from '../audit/link-rules.js';
import { defaultThreads, pageRunner } from './page-runner.js';
import { readPages } from './link-query.js';
import type { ChainKind } from './pages.js';

export interface WalkOptions {
  /** Links a page holds. @defaultValue 5000 */
  pageSize?: number;
  /** Hashing threads; 0 hashes on this thread. @defaultValue by the number of links to walk (page-runner.ts) */
  threads?: number;
}

export type WalkVerdict = { ok: true; checked: number; state: LinkState } | { ok: false; checked: number; position: number; reason: string };

/**
 * Walks a chain from `from` (a link already trusted, or the chain's start) to its end, page by page. The links
 * are streamed in order by COPY statements over keyset chunks, cut into pages, and each page is parsed and
 * hashed (on a hashing thread where the cores allow, page-runner.ts) while the next pages are read; the
 * outcomes are then joined in order, each page's first link against the last link of the page before. So the verdict is exactly a one-link-at-a-time walk's, and memory
 * holds a few pages at most (the threads' pages and two read ahead, the socket paused past that) whatever the
 * chain's length.
 */
export async function walkChain(
  db: pg.Pool | pg.PoolClient,
  kind: ChainKind,
  rules: ChainRules,
  from: LinkState,
  opts: WalkOptions & { remaining: () => Promise<number> },
): Promise<WalkVerdict> {
  const pageSize = opts.pageSize ?? 5000;
  const runner = pageRunner(opts.threads ?? defaultThreads(await opts.remaining()));
  const inFlight: Promise<PageOutcome>[] = [];
  const pages = await readPages(db, kind, from.seq, pageSize);
  let exhausted = false;
  let state = from;
  let checked = 0;
  try {
    for (;;) {
      while (!exhausted && inFlight.length <= runner.width) {
        const page = await pages.next();
        if (page === null) {
          exhausted = true;
          break;
        }
        const walked = runner.walk(kind, page.bytes);
        walked.catch(() => undefined); // awaited in order below; a page after a failure is never awaited
        inFlight.push(walked);
      }
      const next = inFlight.shift();
      if (!next) return { ok: true, checked, state };
      const out = await next;
      const first = out.first!;
      const reason = linkFailure(rules, state, first);
      if (reason !== null) return { ok: false, checked, position: first.position, reason };
      checked += 1;
      if (out.failure) {
        if ('error' in out.failure) throw new Error(out.failure.error);
        return { ok: false, checked: checked + out.failure.index - 1, position: out.failure.position, reason: out.failure.reason };
      }
      checked += out.count - 1;
      state = out.last!;
    }
  } finally {
    await Promise.all([pages.close(), runner.close()]);
  }
}
