import { STOP_POLLING_CODES, type ItoApi, type RunSummary } from '@ito/client';
import { ok, type Envelope } from '@ito/contracts';
import type { Context } from '../context.js';
import { formatLogLine, readLogsFrom, type LogLine, type LogPage } from './log-pages.js';
import { progressPrinter, watchEnds } from './watch.js';

/**
 * Prints log lines as they arrive until the run can make no more progress. Lines go to stdout for people
 * (they are the output); with --json they are collected into the one envelope printed at the end.
 */
export async function followLogs(
  api: ItoApi,
  runId: string,
  ctx: Context,
  intervalMs: number,
): Promise<Envelope<LogPage & { run: RunSummary | null }>> {
  const collected: LogLine[] = [];
  const printer = progressPrinter(ctx);
  let cursor = 0;
  const take = (page: LogPage) => {
    cursor = page.next_cursor;
    collected.push(...page.lines);
    if (!ctx.json && page.lines.length > 0) process.stdout.write(`${page.lines.map(formatLogLine).join('\n')}\n`);
  };
  try {
    for (let i = 0; ; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, intervalMs));
      const logs = await readLogsFrom(api, runId, cursor);
      if (!logs.ok) {
        if (STOP_POLLING_CODES.has(logs.error.code) || !logs.error.retryable) return logs;
        continue;
      }
      take(logs.data);
      const run = await api.getRun(runId);
      if (!run.ok) {
        if (STOP_POLLING_CODES.has(run.error.code) || !run.error.retryable) return run;
        continue;
      }
      printer.update(run.data);
      if (watchEnds(run.data)) {
        // The run may have written its last lines between the two reads.
        const tail = await readLogsFrom(api, runId, cursor);
        if (tail.ok) take(tail.data);
        return ok({ run_id: runId, lines: collected, next_cursor: cursor, run: run.data });
      }
    }
  } finally {
    printer.end();
  }
}
