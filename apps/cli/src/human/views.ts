/** People's views of confirmations, runs and run telemetry, built from the API's response fields. Pure. */
import { indent, keyValue, table } from './format.js';
import { asRecord, renderPlan, usd } from './plan.js';

type Data = Record<string, unknown>;

/** Scalar fields only: nested values get a view of their own or are left to --json. */
function scalars(d: Data, skip: readonly string[]): Data {
  return Object.fromEntries(Object.entries(d).filter(([k, v]) => !skip.includes(k) && (v === null || typeof v !== 'object')));
}

/** `confirm request|show|approve|deny`: what the confirmation binds, then the plan an approver is asked to allow. */
export function renderConfirmation(d: Data): string {
  const head = scalars(d, ['plan', 'cost_usd', 'max_incremental_cost_usd', 'manifest_digest']);
  const plan = asRecord(d.plan);
  if (!plan) {
    // Run actions bind no cost: show the binding as it stands.
    return keyValue({ ...head, ...(d.manifest_digest ? { manifest_digest: d.manifest_digest } : {}), cost_usd: usd(d.cost_usd) ?? d.cost_usd });
  }
  return `${keyValue(head)}\nplan:\n${indent(renderPlan(plan, { estimated_cost_usd: d.cost_usd, max_incremental_cost_usd: d.max_incremental_cost_usd, manifest_digest: d.manifest_digest }))}`;
}

/** `status`, `train`: the run without its stored plan JSON; a one-line shape of the plan instead. */
export function renderRun(d: Data): string {
  const view = scalars(d, ['estimated_cost_usd', 'incremental_cost_usd']);
  const plan = asRecord(d.plan);
  if (typeof d.estimated_cost_usd === 'number') view.estimated_cost = usd(d.estimated_cost_usd);
  if (typeof d.incremental_cost_usd === 'number') view.incremental_cost = usd(d.incremental_cost_usd);
  if (plan) view.plan = `tp ${String(plan.tp)} · pp ${String(plan.pp)} · dp ${String(plan.dp)} · cp ${String(plan.cp)} · ${String(plan.precision)}`;
  return keyValue(view);
}

/** `cancel`, `cleanup`, `restart`: the new state, the events written, and for cleanup what is left to remove. */
export function renderRunAction(d: Data): string {
  const view = scalars(d, ['events', 'to_remove']);
  if (Array.isArray(d.events)) view.events = d.events.join(', ') || '-';
  const lines = [keyValue(view)];
  if (Array.isArray(d.to_remove)) lines.push(d.to_remove.length === 0 ? 'to remove: nothing\n' : `to remove:\n${d.to_remove.map((u) => `  - ${String(u)}`).join('\n')}\n`);
  return lines.join('');
}

/** `metrics`: the latest progress, each stage, the evaluations, the spend and a tail of the series. */
export function renderMetrics(d: Data): string {
  const latest = asRecord(d.latest);
  const series = Array.isArray(d.series) ? (d.series as Data[]) : [];
  const stages = Array.isArray(d.stages) ? (d.stages as Data[]) : [];
  const evals = Array.isArray(d.evaluations) ? (d.evaluations as Data[]) : [];
  const spend = asRecord(d.spend);
  const parts = [latest ? `latest:\n${indent(keyValue(latest))}` : 'latest: no progress recorded yet\n'];
  if (stages.length > 0) parts.push(`stages:\n${indent(table(stages, ['stage', 'status', 'attempts', 'started_at', 'completed_at']))}`);
  if (evals.length > 0) {
    const rows = evals.map((e) => ({ stage: e.stage, gate: e.passed ? 'passed' : 'FAILED', failed: Array.isArray(e.failed) && e.failed.length > 0 ? e.failed.join('; ') : '-' }));
    parts.push(`evaluations:\n${indent(table(rows, ['stage', 'gate', 'failed']))}`);
  }
  if (spend) parts.push(`spend: ${usd(spend.spent_usd) ?? String(spend.spent_usd)} of ${usd(spend.ceiling_usd) ?? String(spend.ceiling_usd)}\n`);
  if (series.length > 0) parts.push(`series (last ${Math.min(20, series.length)} of ${series.length}):\n${indent(table(series.slice(-20), ['stage', 'step', 'tokens', 'loss']))}`);
  parts.push(`checkpoints: ${String(d.checkpoints ?? 0)}\n`);
  return parts.join('');
}

export function renderCheckpoints(d: Data): string {
  const rows = Array.isArray(d.checkpoints) ? (d.checkpoints as Data[]) : [];
  const view = rows.map((c) => ({
    ...c,
    bandwidth: typeof c.bandwidth_bytes_per_s === 'number' ? `${(c.bandwidth_bytes_per_s / 1e9).toFixed(2)} GB/s` : '-',
  }));
  return view.length === 0 ? '(no checkpoints yet)\n' : table(view, ['checkpoint_id', 'stage', 'step', 'bytes', 'save_seconds', 'bandwidth', 'uri']);
}

export function renderEvents(d: Data): string {
  const rows = Array.isArray(d.events) ? (d.events as Data[]) : [];
  return table(rows, ['position', 'version', 'type', 'recorded_at']);
}
