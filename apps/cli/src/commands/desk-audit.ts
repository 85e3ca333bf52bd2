import { writeFile } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import type { ItoApi } from '@ito/client';
import { ok, type Envelope } from '@ito/contracts';
import { keyValue } from '../human/format.js';
import { telemetryTable } from '../human/telemetry-table.js';
import { usageOutcome } from '../output.js';
import { flag, type Handler } from './handler.js';

/** Pages through /v1/audit/events from position 0; bounded so a misbehaving server cannot loop us forever. */
const MAX_PAGES = 10_000;

export const deskTelemetryCommand: Handler = async (cmd, ctx) => {
  const answer = await (await ctx.api()).deskTelemetry({ group_by: flag(cmd, 'group-by'), since: flag(cmd, 'since'), until: flag(cmd, 'until') });
  return { envelope: answer, human: (d: Record<string, unknown>) => telemetryTable(d) };
};

async function allEvents(api: ItoApi): Promise<Envelope<{ events: Record<string, unknown>[] }>> {
  const events: Record<string, unknown>[] = [];
  let after: number | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await api.auditEvents({ after });
    if (!answer.ok) return answer;
    const batch = (answer.data.events ?? []) as Record<string, unknown>[];
    if (batch.length === 0) break;
    events.push(...batch);
    const last = Number(batch[batch.length - 1]!.position);
    if (!Number.isFinite(last) || (after !== undefined && last <= after)) break;
    after = last;
  }
  return ok({ events });
}

/** Creates the export file; never overwrites one, and keeps it private to the auditor. */
async function writeExport(path: string, digest: unknown, events: unknown[]): Promise<void> {
  await writeFile(path, `${JSON.stringify({ digest, events }, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
}

export const auditVerifyCommand: Handler = async (cmd, ctx) => {
  const out = flag(cmd, 'export');
  if (out !== undefined && !isAbsolute(out)) return usageOutcome('--export needs an absolute path');
  const api = await ctx.api();
  const digest = await api.auditDigest();
  if (!digest.ok || out === undefined) return { envelope: digest, human: (d) => keyValue(d) };
  const events = await allEvents(api);
  if (!events.ok) return { envelope: events };
  await writeExport(out, digest.data, events.data.events);
  return { envelope: ok({ ...digest.data, exported_to: out, exported_events: events.data.events.length }), human: (d) => keyValue(d) };
};

export const auditExportCommand: Handler = async (cmd, ctx) => {
  const out = flag(cmd, 'out')!;
  if (!isAbsolute(out)) return usageOutcome('--out needs an absolute path');
  const api = await ctx.api();
  const digest = await api.auditDigest();
  if (!digest.ok) return { envelope: digest };
  const events = await allEvents(api);
  if (!events.ok) return { envelope: events };
  await writeExport(out, digest.data, events.data.events);
  return { envelope: ok({ out, events: events.data.events.length, digest: digest.data }), human: (d) => `wrote ${String(d.events)} events to ${String(d.out)}\n` };
};

export const auditReplayCommand: Handler = async (cmd, ctx) => {
  const asOf = flag(cmd, 'as-of');
  if (asOf !== undefined && !/^\d+$/.test(asOf)) return usageOutcome('--as-of must be a ledger position (a non-negative integer)');
  const answer = await (await ctx.api()).auditDigest({ as_of: asOf });
  return { envelope: answer, human: (d) => keyValue(d) };
};
