import type { RunAction } from '@ito/client';
import { columnsOf, keyValue, table } from '../human/format.js';
import { readManifestSafely } from '../manifest/read-manifest.js';
import { usageOutcome, type Outcome } from '../output.js';
import { flag, switchOn, type Handler } from './handler.js';
import { DEFAULT_INTERVAL_MS, followLogs, formatLogEntry, watchRun } from './watch.js';
import { ok, fail } from '@ito/contracts';

function interval(raw: string | undefined): number | Outcome {
  if (raw === undefined) return DEFAULT_INTERVAL_MS;
  const n = Number(raw);
  return Number.isInteger(n) && n >= 50 && n <= 600_000 ? n : usageOutcome('--interval must be an integer number of milliseconds between 50 and 600000');
}

/** The manifest is read before any client exists: a refused file never reaches the network. */
export const trainCommand: Handler = async (cmd, ctx) => {
  const manifest = await readManifestSafely(flag(cmd, 'manifest')!);
  const api = await ctx.api();
  const answer = await api.train(
    { booking_id: flag(cmd, 'booking')!, manifest: manifest.text, manifest_digest: manifest.digest, confirmation_ref: flag(cmd, 'confirmation-ref')! },
    flag(cmd, 'idempotency-key')!,
  );
  return { envelope: answer, human: (d) => `${keyValue(d)}\nFollow it with: ito status ${String(d.run_id ?? '<run-id>')} --watch\n` };
};

export const statusCommand: Handler = async (cmd, ctx) => {
  const runId = cmd.positionals[0];
  const key = flag(cmd, 'idempotency-key');
  if (!runId === !key) return usageOutcome('give either <run-id> or --idempotency-key <key>');
  const every = interval(flag(cmd, 'interval'));
  if (typeof every !== 'number') return every;
  const api = await ctx.api();
  let id = runId;
  if (!id) {
    const found = await api.findRunsByKey(key!);
    if (!found.ok) return { envelope: found };
    const run = found.data.runs[0];
    if (!run) return { envelope: fail('not_found', `no run was created with idempotency key ${key}`) };
    if (!switchOn(cmd, 'watch')) return { envelope: ok(run, { notice: found.notice }), human: (d) => keyValue(d) };
    id = run.run_id;
  }
  const answer = switchOn(cmd, 'watch') ? await watchRun(api, id, ctx, every) : await api.getRun(id);
  return { envelope: answer, human: (d) => keyValue(d) };
};

export const logsCommand: Handler = async (cmd, ctx) => {
  const every = interval(flag(cmd, 'interval'));
  if (typeof every !== 'number') return every;
  const api = await ctx.api();
  const runId = cmd.positionals[0]!;
  if (switchOn(cmd, 'follow')) {
    // Lines were already printed as they arrived; only the envelope (for --json) is left to show.
    return { envelope: await followLogs(api, runId, ctx, every), human: () => '' };
  }
  const answer = await api.runLogs(runId);
  return {
    envelope: answer,
    human: (d: Record<string, unknown>) => {
      const list = (d.lines ?? d.logs ?? d.entries ?? []) as unknown[];
      return list.length === 0 ? '(no log lines yet)\n' : `${list.map((e) => formatLogEntry(typeof e === 'string' ? { line: e } : (e as Record<string, unknown>))).join('\n')}\n`;
    },
  };
};

export const metricsCommand: Handler = async (cmd, ctx) => {
  const answer = await (await ctx.api()).runMetrics(cmd.positionals[0]!);
  return { envelope: answer, human: (d) => listOrKeys(d, 'metrics', ['step', 'loss', 'tokens', 'recorded_at']) };
};

export const checkpointsCommand: Handler = async (cmd, ctx) => {
  const answer = await (await ctx.api()).runCheckpoints(cmd.positionals[0]!);
  return { envelope: answer, human: (d) => listOrKeys(d, 'checkpoints', ['checkpoint_id', 'step', 'bytes', 'save_seconds', 'uri', 'recorded_at']) };
};

export const eventsCommand: Handler = async (cmd, ctx) => {
  const answer = await (await ctx.api()).runEvents(cmd.positionals[0]!);
  return { envelope: answer, human: (d) => listOrKeys(d, 'events', ['position', 'type', 'recorded_at']) };
};

function runActionCommand(action: RunAction): Handler {
  return async (cmd, ctx) => {
    const body: { confirmation_ref: string; release_booking?: boolean } = { confirmation_ref: flag(cmd, 'confirmation-ref')! };
    if (action === 'cleanup') body.release_booking = switchOn(cmd, 'release-booking');
    const answer = await (await ctx.api()).runAction(cmd.positionals[0]!, action, body, flag(cmd, 'idempotency-key')!);
    return { envelope: answer, human: (d) => keyValue(d) };
  };
}

export const cancelCommand = runActionCommand('cancel');
export const cleanupCommand = runActionCommand('cleanup');
export const restartCommand = runActionCommand('restart');

function listOrKeys(d: Record<string, unknown>, field: string, preferred: string[]): string {
  const rows = d[field];
  if (!Array.isArray(rows)) return keyValue(d);
  return table(rows as Record<string, unknown>[], columnsOf(rows as Record<string, unknown>[], preferred));
}
