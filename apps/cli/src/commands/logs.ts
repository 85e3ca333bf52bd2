import { STOP_POLLING_CODES, type ItoApi, type RunSummary } from '@ito/client';
import { ok, type Envelope } from '@ito/contracts';
import type { Context } from '../context.js';
import { progressPrinter, watchEnds } from './watch.js';

/** One line of `GET /v1/runs/:id/logs`: `cursor` is the stream version it came from. */
export interface LogLine {
  cursor: number;
  at: string;
  type: string;
  message: string;
}

export interface LogPage {
  run_id: string;
  lines: LogLine[];
  next_cursor: number;
}

/** The largest page the API serves. */
const PAGE_LIMIT = 1000;

export function formatLogLine(l: LogLine): string {
  return `${l.at}  ${l.message}`;
}

/**
 * Every line after `cursor`, page by page. The first refusal is returned as it came; a page that does not
 * move the cursor ends the read, so a misbehaving server cannot keep the loop alive.
 */
export async function readLogsFrom(api: ItoApi, runId: string, cursor: number): Promise<Envelope<LogPage>> {
  const lines: LogLine[] = [];
  let at = cursor;
  let notice: string | null = null;
  for (;;) {
    const page = (await api.runLogs(runId, { cursor: at, limit: PAGE_LIMIT })) as Envelope<LogPage>;
    if (!page.ok) return page;
    notice = page.notice;
    lines.push(...page.data.lines);
    const advanced = page.data.next_cursor > at;
    at = page.data.next_cursor;
    if (page.data.lines.length < PAGE_LIMIT || !advanced) return ok({ run_id: runId, lines, next_cursor: at }, { notice });
  }
}

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
