import { createHash } from 'node:crypto';
import { ItoError } from '@ito/contracts';
import { BatteryError, parseBattery, type Battery } from '@ito/dataprep';
import { MAX_EVAL_BATTERY_BYTES, isEvalBatteryName } from '@ito/domain';

export interface CheckedBatteryFile {
  battery: Battery;
  sha256: string;
  items: number;
  bytes: number;
}

/**
 * An items file as an operator hands it in: a path-safe name, at most {@link MAX_EVAL_BATTERY_BYTES}, UTF-8 JSON
 * lines of exactly `{"id", "task", "text"}` (what decontamination reads; packages/dataprep `parseBattery`), at
 * most `MAX_BATTERY_ITEMS` of them. A refusal is `eval_battery_invalid` and names the line, never its content.
 */
export function checkBatteryFile(name: string, bytes: Uint8Array): CheckedBatteryFile {
  if (!isEvalBatteryName(name)) throw new ItoError('eval_battery_invalid', 'the battery name must be a path-safe name such as ito-evals/v1 (lower-case segments, at most 128 characters)');
  if (bytes.length > MAX_EVAL_BATTERY_BYTES) throw new ItoError('eval_battery_invalid', `the items file is larger than ${MAX_EVAL_BATTERY_BYTES} bytes`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ItoError('eval_battery_invalid', 'the items file is not UTF-8');
  }
  try {
    const battery = parseBattery(name, text);
    return { battery, sha256: createHash('sha256').update(bytes).digest('hex'), items: battery.items.length, bytes: bytes.length };
  } catch (err) {
    if (err instanceof BatteryError) throw new ItoError('eval_battery_invalid', `the items file is refused: ${err.message}`);
    throw err;
  }
}
