/**
 * The eval battery registry: an operator registers a battery's items once (`ito-admin battery add`), the items
 * are stored by their sha256 under the operator's storage, and the ledger records the name, the digest and the
 * item count. A name is registered once and never changes: what a run was checked against is the digest its name
 * was registered with.
 */

/** A battery name as manifests write it (`ito-evals/v1`): lower-case segments, never `.` or `..`. */
export const EVAL_BATTERY_NAME = /^[a-z0-9][a-z0-9_-]*(\.[a-z0-9_-]+)*(\/[a-z0-9][a-z0-9_-]*(\.[a-z0-9_-]+)*){0,3}$/;
export const MAX_EVAL_BATTERY_NAME_LENGTH = 128;
/** A battery file is a few megabytes at most; a larger one is the wrong file. */
export const MAX_EVAL_BATTERY_BYTES = 64 * 1024 * 1024;

export function isEvalBatteryName(name: unknown): name is string {
  return typeof name === 'string' && name.length <= MAX_EVAL_BATTERY_NAME_LENGTH && EVAL_BATTERY_NAME.test(name);
}

/** The event an operator's registration records, on the battery's own stream (tenant: the operator's account). */
export interface EvalBatteryRegisteredEvent {
  name: string;
  /** sha256 of the items file as stored: a worker refuses any bytes that do not hash to it. */
  sha256: string;
  items: number;
  bytes: number;
}

export const EVAL_BATTERY_REGISTERED = 'EvalBatteryRegistered';

/** One stream per battery name, so a second registration of a name conflicts with the first. */
export function evalBatteryStreamId(name: string): string {
  return `eval-battery-${name}`;
}

/** Where a battery's items are kept under the operator's storage: content-addressed, one object per digest. */
export function evalBatteryObjectUri(operatorStorage: string, sha256: string): string {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error('an eval battery object is named by a sha256 in lower-case hex');
  return `${operatorStorage.replace(/\/+$/, '')}/eval-batteries/sha256/${sha256}.jsonl`;
}

/** The operator's own account (apps/api `OPERATOR_TENANT_ID`): registrations are the operator's events. */
export const EVAL_BATTERY_TENANT_ID = `ten_${'0'.repeat(32)}`;
