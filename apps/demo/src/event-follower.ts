import type { ApiGet, LogPage } from './api.js';

export interface EventFollower {
  stop: () => Promise<void>;
  /** Every event type seen, in order. */
  seen: () => string[];
  /** How many events of a type have been seen so far. */
  count: (type: string) => number;
}

/**
 * Follows a run's log through the real API, silently: the demo times its fault and writes its summary from it,
 * while what the person sees is the CLI's own output (`ito status --watch`).
 */
export function followEvents(get: ApiGet, runId: string, intervalMs = 400): EventFollower {
  let cursor = 0;
  let stopped = false;
  const types: string[] = [];
  const counts = new Map<string, number>();
  const drain = async () => {
    for (;;) {
      const page = await get<LogPage>(`/v1/runs/${runId}/logs?cursor=${cursor}&limit=1000`);
      for (const line of page.lines) {
        types.push(line.type);
        counts.set(line.type, (counts.get(line.type) ?? 0) + 1);
      }
      cursor = page.next_cursor;
      if (page.lines.length < 1000) return;
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await drain().catch(() => undefined);
      await new Promise((r) => setTimeout(r, intervalMs));
    }
    await drain().catch(() => undefined);
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
    seen: () => types,
    count: (type) => counts.get(type) ?? 0,
  };
}
