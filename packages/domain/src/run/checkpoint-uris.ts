/**
 * Where a run's checkpoints live: `<storage>/<run id>/`. Every checkpoint an agent reports must be under it,
 * so that pruning and cleanup (which delete what the ledger lists) can never be pointed at anything else.
 */
export function checkpointPrefix(storage: string, runId: string): string {
  return `${storage.replace(/\/+$/, '')}/${runId}/`;
}

const SAFE_REST = /^[A-Za-z0-9._=-]+(?:\/[A-Za-z0-9._=-]+)*\/?$/;

/** True when `uri` names something strictly inside `prefix`, with no `.`/`..` segment and no escapes. */
export function isInsidePrefix(uri: string, prefix: string): boolean {
  if (!uri.startsWith(prefix)) return false;
  const rest = uri.slice(prefix.length);
  return SAFE_REST.test(rest) && !rest.split('/').some((seg) => seg === '.' || seg === '..');
}
