import type { ItoApi } from '@ito/client';
import { ok, type Envelope } from '@ito/contracts';

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
