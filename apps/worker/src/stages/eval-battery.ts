import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BatteryError, parseBattery, type Battery } from '@ito/dataprep';

/** A battery name as manifests write it (`ito-evals/v1`): lower-case segments, never `.` or `..`. */
const BATTERY_NAME = /^[a-z0-9][a-z0-9_-]*(\.[a-z0-9_-]+)*(\/[a-z0-9][a-z0-9_-]*(\.[a-z0-9_-]+)*){0,3}$/;
/** A battery file is a few megabytes at most; a larger one is the wrong file. */
const MAX_BATTERY_BYTES = 64 * 1024 * 1024;

export type LoadedBattery = { ok: true; battery: Battery; sha256: string } | { ok: false; reason: string };

/**
 * The items of the eval battery a manifest names, from `<dir>/<name>.jsonl` (`ito-evals/v1` →
 * `<dir>/ito-evals/v1.jsonl`). Without the items the documents cannot be checked, so a missing battery is a
 * refusal, never a pass.
 */
export async function loadEvalBattery(dir: string | undefined, name: string): Promise<LoadedBattery> {
  if (!BATTERY_NAME.test(name)) return { ok: false, reason: 'the eval battery name is not a path-safe name such as ito-evals/v1' };
  if (!dir) return { ok: false, reason: `no eval battery directory is configured (ITO_EVAL_BATTERY_DIR), so the data cannot be checked against ${name}` };
  let bytes: Buffer;
  try {
    bytes = await readFile(join(dir, `${name}.jsonl`));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { ok: false, reason: `the items of eval battery ${name} are not on this worker (${code === 'ENOENT' ? 'no such file' : (code ?? 'unreadable')}), so the data cannot be checked against it` };
  }
  if (bytes.length > MAX_BATTERY_BYTES) return { ok: false, reason: `the items file of eval battery ${name} is larger than ${MAX_BATTERY_BYTES} bytes` };
  try {
    const battery = parseBattery(name, bytes.toString('utf8'));
    return { ok: true, battery, sha256: createHash('sha256').update(bytes).digest('hex') };
  } catch (err) {
    if (err instanceof BatteryError) return { ok: false, reason: `eval battery ${name}: ${err.message}` };
    throw err;
  }
}
