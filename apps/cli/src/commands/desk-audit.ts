import { telemetryTable } from '../human/telemetry-table.js';
import { flag, type Handler } from './handler.js';

export const deskTelemetryCommand: Handler = async (cmd, ctx) => {
  const answer = await (await ctx.api()).deskTelemetry({ group_by: flag(cmd, 'group-by'), since: flag(cmd, 'since'), until: flag(cmd, 'until') });
  return { envelope: answer, human: (d: Record<string, unknown>) => telemetryTable(d) };
};
