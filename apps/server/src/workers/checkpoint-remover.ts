import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { CheckpointRemover } from '@ito/worker';

/**
 * Removes `file://` checkpoints; any other scheme is a record the simulated executor wrote without bytes, so
 * there is nothing to remove. (The storage drivers replace this when an object store is configured.)
 */
export const fileCheckpointRemover: CheckpointRemover = {
  async remove(uri) {
    if (!uri.startsWith('file://')) return { existed: false };
    const path = fileURLToPath(uri);
    if (path.split('/').includes('..')) throw new Error('refusing a checkpoint path that is not normalised');
    try {
      await rm(path, { recursive: true });
      return { existed: true };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { existed: false };
      throw err;
    }
  },
};
