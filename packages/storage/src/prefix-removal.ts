import type { StorageRegistry } from './registry.js';
import { isStorageError } from './storage-error.js';

export interface PrefixRemoval {
  /** Objects removed, and their bytes as listed just before. */
  objects: number;
  bytes: number;
}

/**
 * Removes every object under `prefix` and says what it removed. The prefix must end in `/`, so `run_1/` never
 * reaches `run_10/`. An object that vanished between the listing and its removal, or that the driver refuses to
 * delete (a symlink on its way), is not counted.
 */
export async function removeUnderPrefix(registry: StorageRegistry, prefix: string): Promise<PrefixRemoval> {
  if (!prefix.endsWith('/')) throw new Error('a prefix to remove under must end in /');
  const driver = registry.driverFor(prefix);
  let objects = 0;
  let bytes = 0;
  let listed;
  try {
    listed = await driver.listObjects(prefix);
  } catch (err) {
    // No bucket: nothing there to remove.
    if (isStorageError(err, 'not_found')) return { objects: 0, bytes: 0 };
    throw err;
  }
  for (const object of listed) {
    let removed: boolean;
    try {
      removed = await driver.remove(object.uri);
    } catch (err) {
      // Swapped for a symlink (or a directory) since the listing: the driver refuses to delete through it; it stays.
      if (isStorageError(err, 'not_an_object')) continue;
      throw err;
    }
    if (removed) {
      objects++;
      bytes += object.bytes;
    }
  }
  return { objects, bytes };
}
