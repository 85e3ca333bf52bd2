/**
 * People's view of a training plan: one summary block, the planner's reasons as a list, and the phases and
 * stage plans as small tables. The nested plan is never printed as one JSON line. Pure functions.
 */
import { indent, keyValue, table } from './format.js';

type Data = Record<string, unknown>;

const asRecord = (v: unknown): Data | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Data) : null);
const asRows = (v: unknown): Data[] => (Array.isArray(v) ? v.filter((r): r is Data => asRecord(r) !== null) : []);

function num(v: unknown, digits: number): string | null {
  return typeof v === 'number' && Number.isFinite(v) ? v.toLocaleString('en-US', { maximumFractionDigits: digits }) : null;
}

export function usd(v: unknown): string | null {
  return typeof v === 'number' && Number.isFinite(v) ? `$${v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}` : null;
}

function percent(v: unknown): string | null {
  return typeof v === 'number' && Number.isFinite(v) ? `${(v * 100).toLocaleString('en-US', { maximumFractionDigits: 1 })}%` : null;
}

/** Drops absent values so a summary lists only what the server sent. */
function present(rows: [string, string | null | undefined][]): Data {
  const out: Data = {};
  for (const [k, v] of rows) if (v !== null && v !== undefined && v !== '') out[k] = v;
  return out;
}

export interface PlanCosts {
  estimated_cost_usd?: unknown;
  incremental_cost_usd?: unknown;
  /** A confirmation binds a ceiling on incremental cost rather than the estimate. */
  max_incremental_cost_usd?: unknown;
  estimated_hours?: unknown;
  manifest_digest?: unknown;
}

/** The summary rows: parallelism, precision, memory, throughput, time, cost and digest. */
export function planSummaryRows(plan: Data | null, costs: PlanCosts): Data {
  const p = plan ?? {};
  return present([
    ['tp', num(p.tp, 0)],
    ['pp', num(p.pp, 0)],
    ['dp', num(p.dp, 0)],
    ['cp', num(p.cp, 0)],
    ['precision', typeof p.precision === 'string' ? p.precision : null],
    ['micro-batch', num(p.micro_batch, 0)],
    ['memory/GPU', num(p.memory_per_gpu_gb, 1) && `${num(p.memory_per_gpu_gb, 1)} GB${typeof p.gpu_memory_gb === 'number' ? ` of ${num(p.gpu_memory_gb, 0)} GB` : ''}`],
    ['tokens/s', num(p.tokens_per_s, 0)],
    ['MFU assumption', percent(p.mfu_assumption)],
    ['hours', num(costs.estimated_hours ?? p.estimated_hours, 1)],
    ['GPU-hours', num(p.gpu_hours, 1)],
    ['estimated cost', usd(costs.estimated_cost_usd)],
    ['incremental cost', usd(costs.incremental_cost_usd)],
    ['max incremental cost', usd(costs.max_incremental_cost_usd)],
    ['digest', typeof costs.manifest_digest === 'string' ? costs.manifest_digest : null],
  ]);
}

const PHASE_COLUMNS = ['phase', 'sequence_length', 'tokens', 'tokens_per_s', 'hours'];
const SPLIT_COLUMNS = ['stage', 'trainer_nodes', 'rollout_nodes', 'separated'];
const STAGE_PLAN_COLUMNS = ['stages', 'sequence_length', 'tp', 'pp', 'dp', 'cp', 'micro_batch', 'memory_per_gpu_gb', 'mfu_effective', 'tokens_per_s'];

function roundCells(rows: Data[]): Data[] {
  return rows.map((r) =>
    Object.fromEntries(
      Object.entries(r).map(([k, v]) => [
        k,
        k.startsWith('mfu') ? (percent(v) ?? v) : typeof v === 'number' ? (num(v, Number.isInteger(v) ? 0 : 3) ?? v) : Array.isArray(v) ? v.join(',') : v,
      ]),
    ),
  );
}

/** Summary, reasons, phases and stage plans; sections with nothing in them are left out. */
export function renderPlan(plan: Data | null, costs: PlanCosts): string {
  const parts = [keyValue(planSummaryRows(plan, costs))];
  const reasons = Array.isArray(plan?.reasons) ? plan.reasons.filter((r): r is string => typeof r === 'string') : [];
  if (reasons.length > 0) parts.push(`reasons:\n${reasons.map((r) => `  - ${r}`).join('\n')}\n`);
  const phases = asRows(plan?.phases);
  if (phases.length > 0) parts.push(`phases:\n${indent(table(roundCells(phases), PHASE_COLUMNS))}`);
  const stagePlans = asRows(plan?.stage_plans);
  if (stagePlans.length > 0) parts.push(`stage plans:\n${indent(table(roundCells(stagePlans), STAGE_PLAN_COLUMNS))}`);
  const split = asRows(plan?.post_training).map((r) => ({ ...r, separated: r.separated === true ? 'yes' : 'no' }));
  if (split.length > 0) parts.push(`post-training split:\n${indent(table(roundCells(split), SPLIT_COLUMNS))}`);
  return parts.join('\n');
}

/**
 * The gates a plan foresees, one line each: passed (✓), would refuse (✗, with the code the refusal would
 * carry) or not checked (-, with why).
 */
export function renderFindings(findings: unknown): string {
  const rows = asRows(findings);
  if (rows.length === 0) return '';
  const width = Math.max(...rows.map((f) => String(f.gate).length));
  const mark = (status: unknown) => (status === 'passed' ? '✓' : status === 'refused' ? '✗' : '-');
  const lines = rows.map((f) => {
    const why = f.status === 'refused' ? ` (${String(f.code)})` : f.status === 'not_checked' ? ' (not checked)' : '';
    return `  ${mark(f.status)} ${String(f.gate).padEnd(width)}  ${String(f.message)}${why}`;
  });
  return `gates:\n${lines.join('\n')}\n`;
}

/** `ito plan`: the gates it foresees, then the planner's answer. */
export function renderPlanAnswer(d: Data): string {
  const gates = renderFindings(d.findings);
  const text = `${gates ? `${gates}\n` : ''}${renderPlan(asRecord(d.plan), d)}`;
  const breakdown = asRecord(d.cost_breakdown);
  if (!breakdown) return text;
  const flat = Object.fromEntries(Object.entries(breakdown).filter(([, v]) => typeof v !== 'object' || v === null));
  return `${text}\ncost breakdown:\n${indent(keyValue(roundCells([flat])[0]!))}`;
}

export { asRecord };
