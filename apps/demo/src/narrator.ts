import type { ApiGet, LogPage } from './api.js';
import type { Terminal } from './terminal.js';

/** Progress points are the live line's business; checkpoints are counted and told when their stage ends. */
const QUIET = new Set(['ProgressRecorded', 'CheckpointSaved', 'CheckpointDeleted']);

export interface Narration {
  stop: () => Promise<void>;
  /** Every event type seen, in order. */
  seen: () => string[];
  /** How many events of a type have been seen so far. */
  count: (type: string) => number;
}

/** Follows a run's log through the real API and prints each new event as it lands. */
export function narrate(get: ApiGet, runId: string, term: Terminal, intervalMs = 400): Narration {
  let cursor = 0;
  let stopped = false;
  const types: string[] = [];
  const counts = new Map<string, number>();
  let saved = 0;
  let pruned = 0;
  const drain = async () => {
    for (;;) {
      const page = await get<LogPage>(`/v1/runs/${runId}/logs?cursor=${cursor}&limit=1000`);
      for (const line of page.lines) {
        types.push(line.type);
        counts.set(line.type, (counts.get(line.type) ?? 0) + 1);
        if (line.type === 'CheckpointSaved') saved++;
        if (line.type === 'CheckpointDeleted') pruned++;
        if (QUIET.has(line.type)) continue;
        let text = line.message;
        if (line.type === 'StageCompleted' && saved > 0) {
          text += ` · ${saved} checkpoint${saved === 1 ? '' : 's'} saved${pruned > 0 ? `, ${pruned} pruned beyond keep_last` : ''}`;
          saved = 0;
          pruned = 0;
        }
        term.event(text);
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
