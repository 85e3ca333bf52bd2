import type { RunAction } from '@ito/client';
import { renderCheckpoints, renderEvents, renderMetrics, renderRun, renderRunAction } from '../human/views.js';
import { readManifestSafely } from '../manifest/read-manifest.js';
import { usageOutcome, type Outcome } from '../output.js';
import { flag, switchOn, type Handler } from './handler.js';
import { formatLogLine, readLogsFrom } from './log-pages.js';
import { followLogs } from './logs.js';
import { DEFAULT_INTERVAL_MS, watchRun } from './watch.js';
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
  return { envelope: answer, human: (d) => `${renderRun(d)}\nFollow it with: ito status ${String(d.run_id ?? '<run-id>')} --watch\n` };
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
    if (!switchOn(cmd, 'watch')) return { envelope: ok(run, { notice: found.notice }), human: renderRun };
    id = run.run_id;
  }
  const answer = switchOn(cmd, 'watch') ? await watchRun(api, id, ctx, every) : await api.getRun(id);
  return { envelope: answer, human: renderRun };
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
  const answer = await readLogsFrom(api, runId, 0);
  return {
    envelope: answer,
    human: (d) => (d.lines.length === 0 ? '(no log lines yet)\n' : `${d.lines.map(formatLogLine).join('\n')}\n`),
  };
};

export const metricsCommand: Handler = async (cmd, ctx) => {
  const answer = await (await ctx.api()).runMetrics(cmd.positionals[0]!);
  return { envelope: answer, human: renderMetrics };
};

export const checkpointsCommand: Handler = async (cmd, ctx) => {
  const answer = await (await ctx.api()).runCheckpoints(cmd.positionals[0]!);
  return { envelope: answer, human: renderCheckpoints };
};

export const eventsCommand: Handler = async (cmd, ctx) => {
  const answer = await (await ctx.api()).runEvents(cmd.positionals[0]!);
  return { envelope: answer, human: renderEvents };
};

/**
 * Releasing the booking at cleanup needs a second, separate booking.release confirmation; the two flags come
 * together or not at all, so a cleanup never fails late on the server for a flag the user could have fixed.
 */
function cleanupRelease(cmd: Parameters<Handler>[0]): { release_booking?: boolean; release_confirmation_ref?: string } | Outcome {
  const release = switchOn(cmd, 'release-booking');
  const ref = flag(cmd, 'release-confirmation-ref');
  if (release && !ref) {
    return usageOutcome('--release-booking needs --release-confirmation-ref <ref>: an approved booking.release confirmation, separate from the run.cleanup one (ito confirm request --action booking.release --run <id>)');
  }
  if (!release && ref) return usageOutcome('--release-confirmation-ref is only used with --release-booking');
  return release ? { release_booking: true, release_confirmation_ref: ref! } : {};
}

function runActionCommand(action: RunAction): Handler {
  return async (cmd, ctx) => {
    let release = {};
    if (action === 'cleanup') {
      const checked = cleanupRelease(cmd);
      if ('envelope' in checked) return checked;
      release = checked;
    }
    const body: { confirmation_ref: string; release_booking?: boolean; release_confirmation_ref?: string } = { confirmation_ref: flag(cmd, 'confirmation-ref')!, ...release };
    const answer = await (await ctx.api()).runAction(cmd.positionals[0]!, action, body, flag(cmd, 'idempotency-key')!);
    return { envelope: answer, human: renderRunAction };
  };
}

export const cancelCommand = runActionCommand('cancel');
export const cleanupCommand = runActionCommand('cleanup');
export const restartCommand = runActionCommand('restart');
