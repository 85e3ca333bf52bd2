import type { TaskSpec } from '@ito/contracts';
import { checkpointPrefix, isInsidePrefix } from '@ito/domain';

/**
 * Where a task's checkpoint at `step` goes: `<storage>/<run id>/<stage>/step-<n>`, with exactly one slash between
 * the storage prefix and the run (a manifest may write its storage with or without a trailing slash).
 */
export function checkpointUri(spec: Pick<TaskSpec, 'run_id' | 'stage' | 'checkpoint'>, step: number): string {
  return `${checkpointPrefix(spec.checkpoint.storage, spec.run_id)}${spec.stage}/step-${step}`;
}

/**
 * True when `uri` names an object inside the run's checkpoint prefix, by the rule the API applies to every
 * checkpoint report, so the agent never forwards one the API would refuse.
 */
export function isUnderRunPrefix(uri: string, spec: Pick<TaskSpec, 'run_id' | 'checkpoint'>): boolean {
  return isInsidePrefix(uri, checkpointPrefix(spec.checkpoint.storage, spec.run_id));
}
