import { poll, type ItoApi, type RunSummary } from '@ito/client';
import { isTerminal, type Envelope, type RunState } from '@ito/contracts';
import type { Context } from '../context.js';
import { paint, progressLine } from '../human/format.js';
import { formatLogLine, readLogsFrom } from './log-pages.js';

/**
 * The log lines `status --watch` keeps on screen: the run's turns (stages, gates, losses, resumes, the end).
 * Read from the run's log by cursor, so a stage shorter than the polling interval is still shown.
 */
export const TRANSITION_TYPES: ReadonlySet<string> = new Set([
  'DataPrepared',
  'StageStarted',
  'StageCompleted',
  'StageFailed',
  'EvalGatePassed',
  'EvalGateFailed',
  'NodeLost',
  'TaskHung',
  'NodeRecovered',
  'RunResumed',
  'LossSpikeDetected',
  'RestartProposed',
  'RunSucceeded',
  'RunFailed',
  'RunCancelled',
]);

/** A watch ends when the run can make no more progress without a person: terminal, cleaned, or waiting. */
export function watchEnds(run: RunSummary): boolean {
  const state = run.state as RunState;
  return isTerminal(state) || state === 'cleaned' || state === 'awaiting_operator';
}

export const DEFAULT_INTERVAL_MS = 2000;

/**
 * Live progress goes to stderr: rewritten in place on a terminal, one line per change otherwise. Lines that
 * stay (`keep`) are written above the live one, which is redrawn after them.
 */
export function progressPrinter(ctx: Context): { update: (run: RunSummary) => void; keep: (line: string) => void; end: () => void } {
  let last = '';
  const draw = () => process.stderr.write(`\r\u001b[2K${paint(ctx.colour, 'dim', last)}`);
  return {
    update(run) {
      const line = progressLine(run);
      if (line === last) return;
      last = line;
      if (ctx.stderrIsTty) draw();
      else process.stderr.write(`${line}\n`);
    },
    keep(line) {
      process.stderr.write(ctx.stderrIsTty ? `\r\u001b[2K${line}\n` : `${line}\n`);
      if (ctx.stderrIsTty && last) draw();
    },
    end() {
      if (ctx.stderrIsTty && last) process.stderr.write('\n');
    },
  };
}

/**
 * Follows a run to its end: each turn of the run (a stage started or done, a gate, a lost node, a resume) on a
 * line of its own as it happens, the progress line below them, and the final state last.
 */
export async function watchRun(api: ItoApi, runId: string, ctx: Context, intervalMs: number): Promise<Envelope<RunSummary>> {
  const printer = progressPrinter(ctx);
  let cursor = 0;
  const showTurns = async () => {
    const logs = await readLogsFrom(api, runId, cursor);
    // Turns are a courtesy beside the run's state: a log page that fails is read again on the next poll.
    if (!logs.ok) return;
    cursor = logs.data.next_cursor;
    for (const line of logs.data.lines) if (TRANSITION_TYPES.has(line.type)) printer.keep(formatLogLine(line));
  };
  try {
    return await poll(
      async () => {
        const run = await api.getRun(runId);
        if (run.ok) await showTurns();
        return run;
      },
      { intervalMs, done: watchEnds, onUpdate: printer.update },
    );
  } finally {
    printer.end();
  }
}

