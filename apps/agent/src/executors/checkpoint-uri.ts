import type { TaskSpec } from '@ito/contracts';

/**
 * Where a task's checkpoint at `step` goes: `<storage>/<run id>/<stage>/step-<n>`, with exactly one slash between
 * the storage prefix and the run (a manifest may write its storage with or without a trailing slash).
 */
export function checkpointUri(spec: Pick<TaskSpec, 'run_id' | 'stage' | 'checkpoint'>, step: number): string {
  return `${spec.checkpoint.storage.replace(/\/+$/, '')}/${spec.run_id}/${spec.stage}/step-${step}`;
}

/** Every checkpoint of a run lives under this prefix; a trainer's report of any other URI is refused. */
export function runCheckpointPrefix(spec: Pick<TaskSpec, 'run_id' | 'checkpoint'>): string {
  return `${spec.checkpoint.storage.replace(/\/+$/, '')}/${spec.run_id}/`;
}

const SAFE_REST = /^[A-Za-z0-9._=-]+(?:\/[A-Za-z0-9._=-]+)*$/;

/** True when `uri` names an object strictly inside the run's checkpoint prefix, with no `.` or `..` segment. */
export function isUnderRunPrefix(uri: string, spec: Pick<TaskSpec, 'run_id' | 'checkpoint'>): boolean {
  const prefix = runCheckpointPrefix(spec);
  if (!uri.startsWith(prefix)) return false;
  const rest = uri.slice(prefix.length);
  return SAFE_REST.test(rest) && !rest.split('/').some((segment) => segment === '.' || segment === '..');
}
