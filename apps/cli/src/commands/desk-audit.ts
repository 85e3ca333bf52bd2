import { columnsOf, keyValue, table } from '../human/format.js';
import { flag, type Handler } from './handler.js';

export const deskTelemetryCommand: Handler = async (cmd, ctx) => {
  const answer = await (await ctx.api()).deskTelemetry({ group_by: flag(cmd, 'group-by'), since: flag(cmd, 'since') });
  return {
    envelope: answer,
    human: (d: Record<string, unknown>) => {
      const groups = d.groups;
      return Array.isArray(groups) ? table(groups as Record<string, unknown>[], columnsOf(groups as Record<string, unknown>[], ['region', 'fabric', 'gpu', 'goodput', 'interruption_rate_per_1k_node_hours', 'checkpoint_bandwidth_p50', 'checkpoint_bandwidth_p95'])) : keyValue(d);
    },
  };
};
