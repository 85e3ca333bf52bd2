import { BatteryError, parseBattery, type Battery } from '@ito/dataprep';
import { isStorageError, type StorageRegistry } from '@ito/storage';
import type { RegisteredBattery } from './battery-lookup.js';
import type { EvalBatteryRegistry } from './battery-registry.js';

/**
 * A registered battery's items as a worker fetched them: `not_registered` when no registration names it,
 * `missing` when its object is not in the operator's storage, `refused` when the bytes there are not the
 * registered ones (another size, another digest) or do not parse.
 */
export type FetchedBattery =
  | { ok: true; battery: Battery; sha256: string; registration: RegisteredBattery }
  | { ok: false; kind: 'not_registered' | 'missing' | 'refused'; reason: string; registration?: RegisteredBattery };

/**
 * Fetches the items of a registered battery by its digest and proves them: the object is read at most to the
 * registered size (a longer one is refused before it is read whole) and must hash to the registered sha256.
 */
export async function fetchRegisteredBattery(registry: EvalBatteryRegistry, storage: StorageRegistry, name: string): Promise<FetchedBattery> {
  const registration = await registry.lookup(name);
  if (!registration) return { ok: false, kind: 'not_registered', reason: `no eval battery named ${name} is registered (ito-admin battery add)` };
  const uri = registry.uriOf(registration.sha256);
  const chunks: Buffer[] = [];
  let stream;
  try {
    stream = await storage.driverFor(uri).readStream(uri);
    for await (const chunk of stream) {
      if (stream.bytes > registration.bytes) return { ok: false, kind: 'refused', reason: `the stored items of eval battery ${name} are not the registered ones (larger than registered)`, registration };
      chunks.push(chunk);
    }
  } catch (err) {
    if (isStorageError(err, 'not_found')) return { ok: false, kind: 'missing', reason: `the items of eval battery ${name} are not in the operator's storage`, registration };
    if (isStorageError(err)) return { ok: false, kind: 'missing', reason: `the items of eval battery ${name} cannot be read from the operator's storage (${err.reason})`, registration };
    throw err;
  }
  if (stream.sha256() !== registration.sha256) return { ok: false, kind: 'refused', reason: `the stored items of eval battery ${name} do not hash to its registered sha256`, registration };
  return parsed(name, Buffer.concat(chunks), registration);
}

/** Items whose digest was already proven; a parse failure here means the registry itself holds a bad file. */
export function parsed(name: string, bytes: Buffer, registration: RegisteredBattery): FetchedBattery {
  try {
    return { ok: true, battery: parseBattery(name, bytes.toString('utf8')), sha256: registration.sha256, registration };
  } catch (err) {
    if (err instanceof BatteryError) return { ok: false, kind: 'refused', reason: `eval battery ${name}: ${err.message}`, registration };
    throw err;
  }
}
