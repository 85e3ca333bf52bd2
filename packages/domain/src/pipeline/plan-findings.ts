import { ItoError, type ErrorCode, type Manifest } from '@ito/contracts';
import { checkCeiling, checkCheckpointStorage, checkDataPolicy, checkIncrementalCost, type TenantPolicy } from '../policy/tenant-policy.js';

/** The gates a plan can foresee, in the order `ito plan` lists them. */
export const FORESEEN_GATES = ['capacity', 'term', 'ceiling', 'incremental cost', 'storage policy', 'data policy'] as const;
export type ForeseenGate = (typeof FORESEEN_GATES)[number];

/**
 * One gate's verdict on a plan: passed, refused (with the code the confirmation or train would answer), or not
 * checked because an earlier refusal left nothing to check it against (no cost without a plan).
 */
export type PlanFinding =
  | { gate: ForeseenGate; status: 'passed'; message: string }
  | { gate: ForeseenGate; status: 'refused'; code: ErrorCode; message: string }
  | { gate: ForeseenGate; status: 'not_checked'; message: string };

/** The planner's answer, as the gates need it. */
export type PlannerVerdict =
  | { ok: true; estimated_cost_usd: number; incremental_cost_usd: number; estimated_hours: number }
  | { ok: false; code: ErrorCode; reason: string };

const money = (usd: number) => `$${usd.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

/** Runs one gate that throws its refusal; a refusal becomes a finding, anything else is rethrown. */
function verdict(gate: ForeseenGate, check: () => void, passed: string): PlanFinding {
  try {
    check();
    return { gate, status: 'passed', message: passed };
  } catch (err) {
    if (!(err instanceof ItoError)) throw err;
    return { gate, status: 'refused', code: err.code, message: err.message };
  }
}

/**
 * Pure: every gate a confirmation and train would apply that can be judged from the manifest, the booking's
 * plan and the tenant's policy, each with its verdict, so a plan says before anything is asked of an approver.
 * The planner's refusal splits in two: a term too short for the plan's hours (`capacity_insufficient`) is the
 * term's, any other (memory, fabric, the model) is the capacity's.
 */
export function foreseePlanGates(manifest: Manifest, policy: TenantPolicy, planner: PlannerVerdict): PlanFinding[] {
  const termRefused = !planner.ok && planner.code === 'capacity_insufficient';
  const findings: PlanFinding[] = [
    planner.ok || termRefused
      ? { gate: 'capacity', status: 'passed', message: "the model fits the booking's GPUs and fabric" }
      : { gate: 'capacity', status: 'refused', code: planner.code, message: planner.reason },
    planner.ok
      ? { gate: 'term', status: 'passed', message: `the plan's ${planner.estimated_hours.toFixed(1)} hours fit in the booking's term` }
      : termRefused
        ? { gate: 'term', status: 'refused', code: planner.code, message: planner.reason }
        : { gate: 'term', status: 'not_checked', message: 'no plan to measure against the term' },
  ];
  if (planner.ok) {
    const { estimated_cost_usd: estimate, incremental_cost_usd: incremental } = planner;
    findings.push(
      verdict('ceiling', () => checkCeiling(manifest, estimate), `estimated cost ${money(estimate)} within the ceiling ${money(manifest.budget.ceiling_usd)}`),
      verdict('incremental cost', () => checkIncrementalCost(manifest, incremental), `incremental cost ${money(incremental)} within the maximum ${money(manifest.budget.max_incremental_cost_usd)}`),
    );
  } else {
    findings.push(
      { gate: 'ceiling', status: 'not_checked', message: 'no estimate without a plan' },
      { gate: 'incremental cost', status: 'not_checked', message: 'no estimate without a plan' },
    );
  }
  findings.push(
    verdict('storage policy', () => checkCheckpointStorage(manifest, policy), `checkpoint storage ${manifest.checkpoint.storage} is allowed`),
    verdict('data policy', () => checkDataPolicy(manifest, policy), `${manifest.data.length} data source(s) within the account's data policy`),
  );
  return findings;
}
