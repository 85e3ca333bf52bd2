import { poll, type ItoApi, type RunSummary } from '@ito/client';
import { isTerminal, type Envelope, type RunState } from '@ito/contracts';
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
