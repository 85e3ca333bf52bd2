import { poll, STOP_POLLING_CODES, type ItoApi, type RunSummary } from '@ito/client';
import { isTerminal, ok, type Envelope, type RunState } from '@ito/contracts';
import type { Context } from '../context.js';
import { paint, progressLine } from '../human/format.js';

/** A watch ends when the run can make no more progress without a person: terminal, cleaned, or waiting. */
export function watchEnds(run: RunSummary): boolean {
  const state = run.state as RunState;
  return isTerminal(state) || state === 'cleaned' || state === 'awaiting_operator';
}

export const DEFAULT_INTERVAL_MS = 2000;

/** Live progress goes to stderr: rewritten in place on a terminal, one line per change otherwise. */
export function progressPrinter(ctx: Context): { update: (run: RunSummary) => void; end: () => void } {
  let last = '';
  return {
    update(run) {
      const line = progressLine(run);
      if (line === last) return;
      last = line;
      process.stderr.write(ctx.stderrIsTty ? `\r\u001b[2K${paint(ctx.colour, 'dim', line)}` : `${line}\n`);
    },
    end() {
      if (ctx.stderrIsTty && last) process.stderr.write('\n');
    },
  };
}

export async function watchRun(api: ItoApi, runId: string, ctx: Context, intervalMs: number): Promise<Envelope<RunSummary>> {
  const printer = progressPrinter(ctx);
  try {
    return await poll(() => api.getRun(runId), { intervalMs, done: watchEnds, onUpdate: printer.update });
  } finally {
    printer.end();
  }
}

interface LogEntry {
  position?: number;
  [field: string]: unknown;
}

function entriesOf(data: Record<string, unknown>): LogEntry[] {
  const list = data.lines ?? data.logs ?? data.entries ?? [];
  return Array.isArray(list) ? list.map((e) => (typeof e === 'string' ? { line: e } : (e as LogEntry))) : [];
}

export function formatLogEntry(e: LogEntry): string {
  const text = e.line ?? e.message ?? e.text ?? JSON.stringify(e);
  const at = e.at ?? e.recorded_at ?? e.ts;
  return at ? `${String(at)}  ${String(text)}` : String(text);
}

/**
 * Prints log lines as they arrive until the run ends. Lines go to stdout for people (they are the output);
 * with --json they are collected into the one envelope printed at the end.
 */
export async function followLogs(api: ItoApi, runId: string, ctx: Context, intervalMs: number): Promise<Envelope<{ lines: LogEntry[]; run: RunSummary | null }>> {
  const collected: LogEntry[] = [];
  const printer = progressPrinter(ctx);
  let lastRun: RunSummary | null = null;
  try {
    for (let i = 0; ; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, intervalMs));
      const logs = await api.runLogs(runId);
      if (!logs.ok) {
        if (STOP_POLLING_CODES.has(logs.error.code) || !logs.error.retryable) return logs;
        continue;
      }
      const fresh = entriesOf(logs.data).slice(collected.length);
      collected.push(...fresh);
      if (!ctx.json && fresh.length > 0) process.stdout.write(`${fresh.map(formatLogEntry).join('\n')}\n`);
      const run = await api.getRun(runId);
      if (!run.ok) {
        if (STOP_POLLING_CODES.has(run.error.code) || !run.error.retryable) return run;
        continue;
      }
      lastRun = run.data;
      printer.update(run.data);
      if (watchEnds(run.data)) return ok({ lines: collected, run: lastRun });
    }
  } finally {
    printer.end();
  }
}

