import { ItoError } from '@ito/contracts';
import { isStorageError, type StorageRegistry } from '@ito/storage';
import type { CheckpointRemover } from './resources.js';

/**
 * Removes checkpoints through the storage drivers. A checkpoint the simulated executor recorded without writing
 * bytes has nothing to remove. A real checkpoint on a scheme this worker has no driver for is refused with its
 * reason (the job retries; the operator configures the driver), never reported as removed. A path the driver
 * refuses to delete through (a symlinked directory on its way, something other than an object) is reported as
 * refused, with the driver's reason, and never as removed: nothing outside the run's prefix is deleted.
 */
export function storageCheckpointRemover(storage: StorageRegistry): CheckpointRemover {
  return {
    async remove(checkpoint) {
      // Simulated first: a modelled checkpoint was never written, even where this worker could reach its store.
      if (checkpoint.simulated) return { existed: false };
      if (storage.supports(checkpoint.uri)) {
        try {
          return { existed: await storage.driverFor(checkpoint.uri).remove(checkpoint.uri) };
        } catch (err) {
          if (isStorageError(err, 'not_an_object') || isStorageError(err, 'outside_root') || isStorageError(err, 'invalid_uri')) {
            return { existed: false, refused: err.reason };
          }
          throw err;
        }
      }
      throw new ItoError('checkpoint_storage_invalid', `no storage driver for ${checkpoint.uri.split(':')[0]}:// in this worker; the checkpoint was not removed`);
    },
  };
}
