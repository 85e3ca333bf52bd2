/** People's views of confirmations, runs and run telemetry, built from the API's response fields. Pure. */
import { formatBytes, formatLoss } from '@ito/contracts';
import { indent, keyValue, table } from './format.js';
import { asRecord, renderPlan, usd } from './plan.js';

type Data = Record<string, unknown>;

/** Scalar fields only: nested values get a view of their own or are left to --json. */
function scalars(d: Data, skip: readonly string[]): Data {
  return Object.fromEntries(Object.entries(d).filter(([k, v]) => !skip.includes(k) && (v === null || typeof v !== 'object')));
}

/**
 * `confirm request|show|approve|deny`: what the confirmation binds and who asked and decided, then the plan an
 * approver is asked to allow, then (on show) the manifest fields that spend money or touch data.
 */
export function renderConfirmation(d: Data): string {
  const head = scalars(d, ['plan', 'cost_usd', 'max_incremental_cost_usd', 'manifest_digest']);
  const plan = asRecord(d.plan);
  const manifest = asRecord(d.manifest);
  const tail = manifest ? `\nmanifest:\n${indent(renderManifestSummary(manifest))}` : '';
  if (!plan) {
    // Run actions bind no cost: show the binding as it stands.
    return `${keyValue({ ...head, ...(d.manifest_digest ? { manifest_digest: d.manifest_digest } : {}), cost_usd: usd(d.cost_usd) ?? d.cost_usd })}${tail}`;
  }
  return `${keyValue(head)}${approvingLine(d)}\nplan:\n${indent(renderPlan(plan, { estimated_cost_usd: d.cost_usd, max_incremental_cost_usd: d.max_incremental_cost_usd, manifest_digest: d.manifest_digest }))}${tail}`;
}

/**
 * Which figure an approver allows: the incremental cost is new money beyond the booking (checkpoint storage,
 * egress), capped by the manifest; the estimate is the booking's own GPU time, already paid for. Said in words,
 * so "$10.93" beside "$3,206.80" is not left to guess.
 */
export function approvingLine(d: Data): string {
  const incremental = usd(d.incremental_cost_usd);
  const estimate = usd(d.cost_usd);
  if (!incremental || !estimate) return '';
  const cap = usd(d.max_incremental_cost_usd);
  return `approving: ${incremental} of new spend beyond the booking (checkpoint storage and egress${cap ? `; the manifest caps it at ${cap}` : ''}), and the use of ${estimate} of the booking's GPU time (already booked, bound to this plan)\n`;
}

/** The manifest summary of `confirm show`: one line per concern, every data source in full. */
export function renderManifestSummary(m: Data): string {
  const model = asRecord(m.model) ?? {};
  const target = asRecord(m.target) ?? {};
  const evalSpec = asRecord(m.eval) ?? {};
  const checkpoint = asRecord(m.checkpoint) ?? {};
  const budget = asRecord(m.budget) ?? {};
  const recipe = Array.isArray(asRecord(m.post_training)?.recipe) ? (asRecord(m.post_training)!.recipe as Data[]) : [];
  const data = Array.isArray(m.data) ? (m.data as Data[]) : [];
  const lines = [
    `digest         ${String(m.manifest_digest)}`,
    `model          ${String(model.family)} ${String(model.parameters)} at ${String(model.revision)} (${String(model.init)})`,
    `curriculum     ${Array.isArray(target.curriculum) ? target.curriculum.join(' → ') : '-'}; ${String(target.tokens)} tokens at sequence length ${String(target.sequence_length)}`,
    `post-training  ${recipe.length === 0 ? 'none' : recipe.map((s) => String(s.stage)).join(' → ')}`,
    `eval           ${String(evalSpec.battery)}; gates on ${Object.keys(asRecord(evalSpec.gates) ?? {}).join(', ') || 'no stage'}`,
    `checkpoints    ${String(checkpoint.storage)} every ${String(checkpoint.interval_minutes)} min, keep ${String(checkpoint.keep_last)}`,
    `budget         ceiling ${usd(budget.ceiling_usd) ?? '-'}, max incremental ${usd(budget.max_incremental_cost_usd) ?? '-'}`,
    `data           ${data.length} source${data.length === 1 ? '' : 's'}:`,
    ...data.map((s) => `  - ${String(s.ref)} sha256 ${String(s.sha256)}, ${String(s.tokens)} tokens, license ${String(s.license)}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** `status`, `train`: the run without its stored plan JSON; a one-line shape of the plan instead. */
export function renderRun(d: Data): string {
  const view = scalars(d, ['estimated_cost_usd', 'incremental_cost_usd']);
  const plan = asRecord(d.plan);
  if (typeof d.estimated_cost_usd === 'number') view.estimated_cost = usd(d.estimated_cost_usd);
  if (typeof d.incremental_cost_usd === 'number') view.incremental_cost = usd(d.incremental_cost_usd);
  const failure = asRecord(d.failure);
  if (failure) view.failure = `${failure.code ? `${String(failure.code)}: ` : ''}${String(failure.reason)}`;
  else delete view.failure;
  // What the running stage waits for (a task's first step within its start-up allowance), only while it waits.
  if (typeof d.waiting_for === 'string') view.waiting_for = d.waiting_for;
  else delete view.waiting_for;
  if (plan) view.plan = `tp ${String(plan.tp)} · pp ${String(plan.pp)} · dp ${String(plan.dp)} · cp ${String(plan.cp)} · ${String(plan.precision)}`;
  // The start-up wait is already the waiting_for line: the list's first_step member does not say it twice.
  const said = typeof d.waiting_for === 'string' ? ['first_step'] : [];
  return `${keyValue(view)}${waitingLines(d, said).map((line) => `${line}\n`).join('')}`;
}

/** The server's words for what the run waits for, one line each ("waiting for nodes: 0 of 2 live"), less `skip`. */
export function waitingLines(d: Data, skip: readonly string[] = []): string[] {
  const waiting = Array.isArray(d.waiting) ? (d.waiting as unknown[]) : [];
  return waiting
    .map((w) => asRecord(w))
    .filter((w) => !skip.includes(String(w?.reason)))
    .map((w) => w?.message)
    .filter((m): m is string => typeof m === 'string');
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
  const parts = [latest ? `latest:\n${indent(keyValue(withLoss(latest)))}` : 'latest: no progress recorded yet\n'];
  if (stages.length > 0) parts.push(`stages:\n${indent(table(stages, ['stage', 'status', 'attempts', 'started_at', 'completed_at']))}`);
  if (evals.length > 0) {
    const rows = evals.map((e) => ({ stage: e.stage, gate: e.passed ? 'passed' : 'FAILED', failed: Array.isArray(e.failed) && e.failed.length > 0 ? e.failed.join('; ') : '-' }));
    parts.push(`evaluations:\n${indent(table(rows, ['stage', 'gate', 'failed']))}`);
  }
  const prepared = Array.isArray(d.data_prepared) ? (d.data_prepared as Data[]) : [];
  if (prepared.length > 0) {
    const rows = prepared.map((p) => {
      const r = asRecord(p.removed) ?? {};
      return { index: p.index, docs_in: p.docs_in, docs_out: p.docs_out, exact: r.exact, near: r.near, contaminated: r.decontamination, battery_items: p.contaminated_items_total };
    });
    parts.push(`data prep:\n${indent(table(rows, ['index', 'docs_in', 'docs_out', 'exact', 'near', 'contaminated', 'battery_items']))}`);
  }
  const ladder = asRecord(d.ladder);
  if (ladder) parts.push(`ladder: ${ladder.passed ? 'passed' : 'FAILED'}: custom ${String(ladder.custom_loss)} vs reference ${String(ladder.reference_loss)} (${String(ladder.rule)})\n`);
  const rollouts = Array.isArray(d.rollouts) ? (d.rollouts as Data[]) : [];
  if (rollouts.length > 0) {
    // The staleness histogram as `versions behind: accepted/rejected`, e.g. `0:12/0 1:9/0 3:0/4`.
    const histogram = (h: unknown) =>
      Object.entries(asRecord(h) ?? {})
        .map(([k, v]) => `${k}:${String(asRecord(v)?.accepted ?? 0)}/${String(asRecord(v)?.rejected ?? 0)}`)
        .join(' ') || '-';
    const rows = rollouts.map((r) => ({ ...r, staleness: histogram(r.staleness_histogram) }));
    parts.push(`rollouts (staleness: versions behind accepted/rejected):\n${indent(table(rows, ['stage', 'attempt', 'accepted', 'rejected', 'pending', 'dropped_groups', 'policy_version', 'staleness']))}`);
  }
  const incidents = Array.isArray(d.incidents) ? (d.incidents as Data[]) : [];
  if (incidents.length > 0) {
    const seconds = (v: unknown) => (typeof v === 'number' ? `${v} s` : '-');
    const rows = incidents.map((i) => ({
      ...i,
      detection: seconds(i.detection_latency_s),
      resume: seconds(i.resume_latency_s),
      breaches: Array.isArray(i.breaches) && i.breaches.length > 0 ? (i.breaches as Data[]).map((b) => `${String(b.slo)} > ${String(b.target_s)} s (${String(b.bound)})`).join('; ') : '-',
    }));
    parts.push(`incidents:\n${indent(table(rows, ['kind', 'node_id', 'detected_at', 'detection', 'resume', 'breaches']))}`);
  }
  if (spend) parts.push(`spend: ${usd(spend.spent_usd) ?? String(spend.spent_usd)} of ${usd(spend.ceiling_usd) ?? String(spend.ceiling_usd)}\n`);
  if (series.length > 0) parts.push(`series (last ${Math.min(20, series.length)} of ${series.length}):\n${indent(table(series.slice(-20).map(withLoss), ['stage', 'step', 'tokens', 'loss']))}`);
  parts.push(`checkpoints: ${String(d.checkpoints ?? 0)}\n`);
  return parts.join('');
}

/** A loss to four decimals for people; the exact value stays in --json. */
function withLoss(row: Data): Data {
  return typeof row.loss === 'number' ? { ...row, loss: formatLoss(row.loss) } : row;
}

export function renderCheckpoints(d: Data): string {
  const rows = Array.isArray(d.checkpoints) ? (d.checkpoints as Data[]) : [];
  const view = rows.map((c) => ({
    ...c,
    size: typeof c.bytes === 'number' ? formatBytes(c.bytes) : '-',
    bandwidth: typeof c.bandwidth_bytes_per_s === 'number' ? `${formatBytes(c.bandwidth_bytes_per_s)}/s` : '-',
  }));
  if (view.length > 0) return table(view, ['checkpoint_id', 'stage', 'step', 'size', 'save_seconds', 'bandwidth', 'uri']);
  // Empty for one of two reasons, and a person should not have to guess which.
  return d.state === 'cleaned' || d.state === 'cleaning_up' ? '(no checkpoints left: cleanup deleted them)\n' : '(no checkpoints yet)\n';
}

export function renderEvents(d: Data): string {
  const rows = Array.isArray(d.events) ? (d.events as Data[]) : [];
  return table(rows, ['position', 'version', 'type', 'recorded_at']);
}
