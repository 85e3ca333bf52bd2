import { fetchRegisteredBattery, type EvalBatteryRegistry } from '@ito/evals';
import type { StorageRegistry } from '@ito/storage';
import { loadEvalBattery, type LoadedBattery } from './eval-battery.js';

/** Where a worker finds registered batteries: the registry (the ledger) and the storage that holds their items. */
export interface EvalBatterySource {
  registry: EvalBatteryRegistry;
  storage: StorageRegistry;
}

/**
 * The items of the battery a manifest names. With a registry, the battery must be registered and its items are
 * fetched by their digest from the operator's storage (ITO_OPERATOR_STORAGE) and proven to hash to it; only when
 * the object is not there does the operator's fallback directory (ITO_EVAL_BATTERY_DIR) serve, and then its file
 * must hash to the registered digest too. Without a registry (data prep driven on its own) the directory serves.
 */
export async function loadBatteryFor(deps: { evalBatteries?: EvalBatterySource | undefined; evalBatteryDir: string | undefined }, name: string): Promise<LoadedBattery> {
  if (!deps.evalBatteries) return loadEvalBattery(deps.evalBatteryDir, name);
  const fetched = await fetchRegisteredBattery(deps.evalBatteries.registry, deps.evalBatteries.storage, name);
  if (fetched.ok) return { ok: true, battery: fetched.battery, sha256: fetched.sha256 };
  if (fetched.kind !== 'missing' || !fetched.registration || !deps.evalBatteryDir) return { ok: false, reason: fetched.reason };
  const local = await loadEvalBattery(deps.evalBatteryDir, name);
  if (!local.ok) return { ok: false, reason: `${fetched.reason}, and ${local.reason}` };
  if (local.sha256 !== fetched.registration.sha256) return { ok: false, reason: `${fetched.reason}, and the file in ITO_EVAL_BATTERY_DIR does not hash to its registered sha256` };
  return local;
}
