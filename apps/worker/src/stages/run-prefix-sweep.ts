import { checkManifestOnce, getManifestBody } from '@ito/runs';
import { checkpointPrefix } from '@ito/domain';
import { defaultStorageRegistry, isStorageError, removeUnderPrefix, type StoredObject } from '@ito/storage';
import type { PipelineResources } from '../resources.js';
import type { RunRef } from './run-access.js';

/** What cleanup removed under the run's prefix, checkpoints included: recorded on `CleanupCompleted`. */
export interface SweptPrefix {
  prefix: string;
  objects: number;
  bytes: number;
}

/**
 * Cleanup's second half. Before the checkpoints are removed one by one, {@link listRunPrefix} takes the sizes of
 * everything the run wrote under `<checkpoint storage>/<run id>/` (checkpoints, prepared data, its reports); after,
 * {@link sweep} removes whatever is still there and totals both, so the record says how much was removed. A
 * prefix on a scheme this worker has no driver for (checkpoints the simulated executor only modelled) has
 * nothing to sweep.
 */
export async function listRunPrefix(res: PipelineResources, run: RunRef & { manifest_digest: string }) {
  const storage = res.storage ?? defaultStorageRegistry();
  const body = await getManifestBody(res.pool, run.tenant_id, run.manifest_digest);
  if (body === null) return null;
  const prefix = checkpointPrefix(checkManifestOnce(body, run.manifest_digest).manifest.checkpoint.storage, run.run_id);
  if (!storage.supports(prefix)) return null;
  let listed: StoredObject[];
  try {
    listed = await storage.driverFor(prefix).listObjects(prefix);
  } catch (err) {
    if (isStorageError(err, 'not_found')) listed = [];
    // The prefix passes through a symlink (or leaves the driver's roots): nothing is swept through it. The
    // checkpoints under it are refused one by one, and recorded so.
    else if (isRefusal(err)) return null;
    else throw err;
  }
  const sizes = new Map(listed.map((o) => [o.uri, o.bytes]));
  return {
    /** Removes the rest; `removedCheckpoints` are the URIs the per-checkpoint removal found and removed. */
    async sweep(removedCheckpoints: string[]): Promise<SweptPrefix> {
      const rest = await removeUnderPrefix(storage, prefix).catch((err: unknown) => {
        // Swapped for a symlink since the listing: refused, as above.
        if (isRefusal(err)) return { objects: 0, bytes: 0 };
        throw err;
      });
      const checkpoints = removedCheckpoints.filter((uri) => sizes.has(uri));
      return {
        prefix,
        objects: checkpoints.length + rest.objects,
        bytes: checkpoints.reduce((sum, uri) => sum + sizes.get(uri)!, 0) + rest.bytes,
      };
    },
  };
}

/** A path the driver will not go through (./no-follow.ts in @ito/storage): nothing there is removed. */
function isRefusal(err: unknown): boolean {
  return isStorageError(err, 'not_an_object') || isStorageError(err, 'outside_root') || isStorageError(err, 'invalid_uri');
}
