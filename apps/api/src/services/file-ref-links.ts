import { lstat } from 'node:fs/promises';
import { ItoError, type Manifest } from '@ito/contracts';
import { fileRefPath, grantedRootOf, manifestFileRefs } from '@ito/domain';

/**
 * At the confirmation request, after the string checks (`checkDataPolicy`): a `file://` ref inside a granted
 * root whose path, below the root, passes through a symlink (or is one) is refused now, not after an approver
 * said yes. Only `lstat` is used, one component at a time from the root down: nothing is opened or followed, and
 * nothing above the root is looked at. A component this host cannot see ends the walk without a verdict: the
 * worker, which opens every component without following a symlink, decides then.
 */
export async function checkFileRefLinks(manifest: Manifest, roots: readonly string[]): Promise<void> {
  for (const ref of manifestFileRefs(manifest)) {
    if (await passesThroughSymlink(ref.uri, roots)) {
      throw new ItoError('data_ref_not_permitted', `${ref.path} passes through a symlink inside its file root`, { path: ref.path });
    }
  }
  const storage = manifest.checkpoint.storage;
  if (storage.startsWith('file:') && (await passesThroughSymlink(storage, roots))) {
    throw new ItoError('checkpoint_storage_invalid', 'checkpoint storage passes through a symlink inside its file root', { path: '$.checkpoint.storage' });
  }
}

async function passesThroughSymlink(uri: string, roots: readonly string[]): Promise<boolean> {
  const path = fileRefPath(uri);
  const root = path === null ? null : grantedRootOf(path, roots);
  if (path === null || root === null) return false; // refused by the string checks before this runs
  const below = path.slice(root === '/' ? 1 : root.length + 1).split('/').filter(Boolean);
  let prefix = root === '/' ? '' : root;
  for (const segment of below) {
    prefix = `${prefix}/${segment}`;
    const info = await lstat(prefix).catch(() => null);
    if (info === null) return false;
    if (info.isSymbolicLink()) return true;
  }
  return false;
}
