import { constants, existsSync } from 'node:fs';
import { lstat, mkdir, open, readlink, rmdir, type FileHandle } from 'node:fs/promises';

/**
 * Opening a path without following a symlink at ANY component, from `/` down. Node cannot open relative to a
 * directory descriptor (no openat), so the walk opens each prefix of the path with `O_NOFOLLOW` (and
 * `O_DIRECTORY` for every directory), which refuses a symlink at the component it adds; then it proves the
 * descriptor it holds is the file that path names now: `lstat` of the path must be the descriptor's own device
 * and inode, and, where Linux shows it, `/proc/self/fd/<n>` (the kernel's resolved path of the descriptor) must
 * be the path itself — a symlink anywhere, or a swap of a directory for one between two steps, resolves
 * elsewhere and is refused.
 */

/** Why a path was not opened. Callers decide what a refusal may say; these reasons never leave the server raw. */
export type NoFollowFailure = 'not_found' | 'symlink' | 'not_a_directory' | 'not_a_file' | 'swapped';

export class NoFollowError extends Error {
  constructor(readonly reason: NoFollowFailure) {
    super(`path refused: ${reason}`);
    this.name = 'NoFollowError';
  }
}

export function isNoFollowError(err: unknown, reason?: NoFollowFailure): err is NoFollowError {
  return err instanceof NoFollowError && (reason === undefined || err.reason === reason);
}

const PROC_FD = '/proc/self/fd';
const procFdAvailable = existsSync(PROC_FD);
const DIR_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_DIRECTORY | constants.O_NONBLOCK;
// O_NONBLOCK: opening a FIFO planted as a data ref must not wait for a writer; a regular file ignores it.
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The components of an absolute normalised path: `/a/b` → `['/a', '/a/b']`. */
function prefixesOf(path: string): string[] {
  if (!path.startsWith('/') || path.includes('\u0000')) throw new NoFollowError('not_found');
  const segments = path.split('/').filter((s) => s !== '');
  if (segments.some((s) => s === '.' || s === '..')) throw new NoFollowError('not_found');
  return segments.map((_, i) => `/${segments.slice(0, i + 1).join('/')}`);
}

/**
 * The refusal an open of `prefix` answered with. Linux answers `O_DIRECTORY | O_NOFOLLOW` on a symlink with
 * ENOTDIR, not ELOOP, so ENOTDIR looks (without following) at what is there.
 */
async function reasonOf(err: unknown, prefix: string): Promise<NoFollowError> {
  if (err instanceof NoFollowError) return err;
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT') return new NoFollowError('not_found');
  if (code === 'ELOOP' || code === 'EMLINK') return new NoFollowError('symlink');
  if (code === 'EISDIR') return new NoFollowError('not_a_file');
  if (code === 'ENOTDIR') {
    const found = await lstat(prefix).catch(() => null);
    return new NoFollowError(found === null ? 'not_found' : found.isSymbolicLink() ? 'symlink' : 'not_a_directory');
  }
  throw err;
}

/** Proves `handle` is what `path` names now, without a symlink on the way (see the module's comment). */
export async function assertSamePath(handle: FileHandle, path: string): Promise<void> {
  const [held, named] = await Promise.all([handle.stat(), lstat(path).catch(() => null)]);
  if (!named || named.isSymbolicLink() || named.dev !== held.dev || named.ino !== held.ino) throw new NoFollowError('swapped');
  if (procFdAvailable) {
    const resolved = await readlink(`${PROC_FD}/${handle.fd}`).catch(() => null);
    if (resolved !== path) throw new NoFollowError('swapped');
  }
}

/**
 * Opens an absolute normalised `path` read-only, no component a symlink: a regular file (`kind: 'file'`) or a
 * directory. Refused with a {@link NoFollowError}; the caller closes the handle.
 */
export async function openNoFollow(path: string, kind: 'file' | 'directory'): Promise<FileHandle> {
  const prefixes = prefixesOf(path);
  if (prefixes.length === 0) {
    if (kind === 'file') throw new NoFollowError('not_a_file');
    return open('/', DIR_FLAGS);
  }
  for (const [i, prefix] of prefixes.entries()) {
    const last = i === prefixes.length - 1;
    let handle: FileHandle;
    try {
      handle = await open(prefix, last && kind === 'file' ? FILE_FLAGS : DIR_FLAGS);
    } catch (err) {
      throw await reasonOf(err, prefix);
    }
    try {
      if (last && kind === 'file' && !(await handle.stat()).isFile()) throw new NoFollowError('not_a_file');
      await assertSamePath(handle, prefix);
    } catch (err) {
      await handle.close();
      throw await reasonOf(err, prefix);
    }
    if (last) return handle;
    await handle.close();
  }
  throw new NoFollowError('not_found');
}

/**
 * Makes sure the directory `path` exists with no symlink at any component, creating the missing ones (mode
 * 0700) when `create` allows it; refuses with a {@link NoFollowError}. Answers the directories this call created,
 * outermost first, so a write that fails afterwards can take them away again.
 */
export async function ensureDirectoryNoFollow(path: string, opts: { create: boolean }): Promise<string[]> {
  const created: string[] = [];
  for (const prefix of prefixesOf(path)) {
    let handle: FileHandle;
    try {
      handle = await open(prefix, DIR_FLAGS);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !opts.create) throw await reasonOf(err, prefix);
      // mkdir never follows a symlink at its last component: an existing one answers EEXIST and the open refuses it.
      const made = await mkdir(prefix, { mode: 0o700 }).then(
        () => true,
        (e: NodeJS.ErrnoException) => {
          if (e.code !== 'EEXIST') throw e;
          return false;
        },
      );
      if (made) created.push(prefix);
      try {
        handle = await open(prefix, DIR_FLAGS);
      } catch (again) {
        throw await reasonOf(again, prefix);
      }
    }
    try {
      await assertSamePath(handle, prefix);
    } finally {
      await handle.close();
    }
  }
  return created;
}

/**
 * Removes directories a failed write created, innermost first, while they are empty: `rmdir` never follows a
 * symlink and never removes a directory another writer has put something in meanwhile, so this takes away only
 * what was left empty; anything it cannot remove stays.
 */
export async function removeEmptyDirectories(created: readonly string[]): Promise<void> {
  for (const dir of [...created].reverse()) {
    try {
      await rmdir(dir);
    } catch {
      return;
    }
  }
}
