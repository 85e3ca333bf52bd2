import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BatteryError, parseBattery, type Battery } from '@ito/dataprep';
import { MAX_EVAL_BATTERY_BYTES as MAX_BATTERY_BYTES, isEvalBatteryName } from '@ito/domain';

export type LoadedBattery = { ok: true; battery: Battery; sha256: string } | { ok: false; reason: string };

/**
 * The items of the eval battery a manifest names, from the operator's fallback directory `<dir>/<name>.jsonl` (`ito-evals/v1` →
 * `<dir>/ito-evals/v1.jsonl`). Without the items the documents cannot be checked, so a missing battery is a
 * refusal, never a pass.
 */
export async function loadEvalBattery(dir: string | undefined, name: string): Promise<LoadedBattery> {
  if (!isEvalBatteryName(name)) return { ok: false, reason: 'the eval battery name is not a path-safe name such as ito-evals/v1' };
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
