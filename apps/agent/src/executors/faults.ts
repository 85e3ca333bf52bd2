import { STAGE_NAMES, stageKind, type StageName, type TaskSpec } from '@ito/contracts';

/**
 * Faults the simulated executor injects, from `ITO_SIM_FAULTS` (CONTRACT: e.g. `crash@step=400`,
 * `hang@step=100`, `loss_spike@step=300`). Grammar, faults separated by `;`:
 *
 *   <kind>@step=<n>[,stage=<stage>][,factor=<x>][,rank=<r>][,attempt=<a>]
 *
 * - `crash`: the task fails (failure kind `crash`) on reaching step n.
 * - `hang`: on reaching step n the task stops making progress and reporting, but stays alive until stopped.
 * - `loss_spike`: from step n on, for the rest of that attempt, the loss is multiplied by `factor` (default 4).
 * - `slow_checkpoint`: the first checkpoint at or after step n takes `factor` (default 20) times its save time.
 * - `slow`: from step n on, for the rest of that attempt, every step takes `factor` (default 2) times as long.
 * - `proxy_loss`: the next 150M-ladder proxy on the custom mix reports `factor` (default 1.1) times its modelled
 *   proxy eval loss, so the ladder decision can be made to fail.
 *
 * "Reaching step n" is the first step boundary at or after n that the task passes (its start counts, so `slow@step=0`
 * slows every step and a task resumed past n meets the fault at its first step). Without `stage` a fault applies to
 * the first training or post-training task that reaches it; evaluation tasks have no steps and meet a fault only when
 * `stage` names them (with step 0). `rank` and `attempt` narrow a fault to a task of that rank, or of that attempt
 * of its stage (for tests that break one node of a job, or only the first try). Each fault fires once per executor
 * (one per agent process): a restarted attempt does not crash again.
 */
export const FAULT_KINDS = ['crash', 'hang', 'loss_spike', 'slow_checkpoint', 'slow', 'proxy_loss'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface SimFault {
  kind: FaultKind;
  step: number;
  stage: StageName | null;
  /** The multiplier of loss_spike, slow_checkpoint and slow; null for crash and hang. */
  factor: number | null;
  /** Only a task of this rank meets it (absent: any rank). */
  rank?: number;
  /** Only this attempt of the stage meets it (absent: any attempt). */
  attempt?: number;
}

export const DEFAULT_FACTORS: Record<FaultKind, number | null> = { crash: null, hang: null, loss_spike: 4, slow_checkpoint: 20, slow: 2, proxy_loss: 1.1 };

/** Bounds on the variable, so parsing it costs little whatever it holds. */
const MAX_TEXT = 4096;
const MAX_FAULTS = 64;
const MAX_FACTOR = 1e6;

export class FaultSpecError extends Error {
  override readonly name = 'FaultSpecError';
}

/**
 * Parses `ITO_SIM_FAULTS` strictly: every entry must follow the grammar exactly, each parameter once. A refusal
 * names the entry by its position and, when it is a known kind, by its kind; nothing else of the text is echoed.
 */
export function parseSimFaults(text: string | undefined): SimFault[] {
  if (text === undefined || text.trim() === '') return [];
  if (text.length > MAX_TEXT) throw new FaultSpecError(`ITO_SIM_FAULTS is longer than ${MAX_TEXT} characters`);
  const entries = text.trim().split(';');
  if (entries.length > MAX_FAULTS) throw new FaultSpecError(`ITO_SIM_FAULTS has more than ${MAX_FAULTS} faults`);
  return entries.map((entry, i) => parseEntry(entry.trim(), i + 1));
}

function parseEntry(entry: string, position: number): SimFault {
  const at = entry.indexOf('@');
  const kindText = at === -1 ? entry : entry.slice(0, at);
  if (!(FAULT_KINDS as readonly string[]).includes(kindText)) {
    throw new FaultSpecError(`ITO_SIM_FAULTS entry ${position}: ${entry === '' ? 'is empty' : 'unknown kind'} (expected ${FAULT_KINDS.join(', ')})`);
  }
  const kind = kindText as FaultKind;
  const refuse = (why: string) => new FaultSpecError(`ITO_SIM_FAULTS entry ${position} (${kind}): ${why}`);
  if (at === -1) throw refuse('expected <kind>@step=<n>');
  const params = new Map<string, string>();
  for (const param of entry.slice(at + 1).split(',')) {
    const eq = param.indexOf('=');
    const key = eq === -1 ? param : param.slice(0, eq);
    if (!['step', 'stage', 'factor', 'rank', 'attempt'].includes(key)) throw refuse('parameters are step, stage, factor, rank and attempt, as key=value');
    if (eq === -1) throw refuse(`${key} has no value`);
    if (params.has(key)) throw refuse(`${key} is given twice`);
    params.set(key, param.slice(eq + 1));
  }
  const step = params.get('step');
  if (step === undefined) throw refuse('step=<n> is required');
  if (!/^\d{1,15}$/.test(step)) throw refuse('step must be a whole number');
  const stage = params.get('stage');
  if (stage !== undefined && !isNodeStage(stage)) throw refuse('stage must name a training, post-training or evaluation stage');
  const factorText = params.get('factor');
  if (factorText !== undefined && DEFAULT_FACTORS[kind] === null) throw refuse('takes no factor');
  let factor = DEFAULT_FACTORS[kind];
  if (factorText !== undefined) {
    factor = /^\d{1,7}(\.\d{1,6})?$/.test(factorText) ? Number(factorText) : NaN;
    if (!(factor > 0 && factor <= MAX_FACTOR)) throw refuse(`factor must be a number above 0 and at most ${MAX_FACTOR}`);
  }
  const rank = params.get('rank');
  if (rank !== undefined && !/^\d{1,6}$/.test(rank)) throw refuse('rank must be a whole number');
  const attempt = params.get('attempt');
  if (attempt !== undefined && !/^[1-9]\d{0,5}$/.test(attempt)) throw refuse('attempt must be a whole number from 1');
  return {
    kind,
    step: Number(step),
    stage: (stage as StageName | undefined) ?? null,
    factor,
    ...(rank !== undefined ? { rank: Number(rank) } : {}),
    ...(attempt !== undefined ? { attempt: Number(attempt) } : {}),
  };
}

function isNodeStage(stage: string): stage is StageName {
  return (STAGE_NAMES as readonly string[]).includes(stage) && stageKind(stage as StageName) !== 'data_prep' && stageKind(stage as StageName) !== 'planning';
}

/** The faults of one executor, each fired at most once across all the tasks it runs. */
export class FaultPlan {
  private readonly fired: boolean[];

  constructor(private readonly faults: readonly SimFault[]) {
    this.fired = faults.map(() => false);
  }

  /**
   * The faults of `kind` this task meets at step boundary `step`, marked fired. A fault without a stage applies
   * only to tasks that have steps (training and post-training); one with a rank or attempt only to such a task.
   */
  take(kind: FaultKind, spec: Pick<TaskSpec, 'stage' | 'kind'> & Partial<Pick<TaskSpec, 'rank' | 'attempt'>>, step: number): SimFault[] {
    const taken: SimFault[] = [];
    this.faults.forEach((fault, i) => {
      if (this.fired[i] || fault.kind !== kind || fault.step > step) return;
      if (fault.stage === null ? spec.kind === 'eval' : fault.stage !== spec.stage) return;
      if ((fault.rank !== undefined && fault.rank !== spec.rank) || (fault.attempt !== undefined && fault.attempt !== spec.attempt)) return;
      this.fired[i] = true;
      taken.push(fault);
    });
    return taken;
  }
}
