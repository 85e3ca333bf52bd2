import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { DigestingStream } from './digest-stream.js';
import { fileUriOf, filePathOf, isSafeSegment, type FileUriUse } from './file-uri.js';
import { assertSamePath, ensureDirectoryNoFollow, isNoFollowError, openNoFollow, removeEmptyDirectories, type NoFollowError } from './no-follow.js';
import type { StorageDriver, StoredObject } from './storage-driver.js';
import { StorageError, isStorageError } from './storage-error.js';

export interface FileStorageOptions {
  /**
   * Absolute directories objects may live under; a URI outside all of them is refused. The agent sets it to the
   * storage it was configured for, so a task cannot make it write elsewhere.
   * @defaultValue no restriction beyond the URI rules
   */
  roots?: string[];
  /**
   * Most directory entries one `list` may visit before it refuses, so a prefix such as `file:///` costs a bounded
   * amount of work.
   * @defaultValue 100_000
   */
  maxListEntries?: number;
}

/** Temporary files of an atomic write: `.<name>.<12 hex>.tmp` beside the object, never listed as objects. */
const TEMP_FILE = /^\..+\.[0-9a-f]{12}\.tmp$/;

/**
 * Objects are regular files. Writes go to a temporary file in the same directory (mode 0600, created exclusively,
 * never through a symlink), are flushed to disk and renamed over the object, so a crash leaves the old object or
 * the new one; directories are created with mode 0700. No operation follows a symlink at any component of the
 * path, from `/` down (./no-follow.ts): a run's prefix with a symlinked directory in it, or above it, is refused
 * (`not_an_object`) instead of written, streamed, listed or deleted through. A delete `lstat`s what it removes.
 * Errors of the file system are reported by their code only: their messages carry the path.
 */
export class FileStorageDriver implements StorageDriver {
  readonly scheme = 'file';
  private readonly roots: string[];
  private readonly maxListEntries: number;

  constructor(opts: FileStorageOptions = {}) {
    this.roots = (opts.roots ?? []).map((root) => filePathOf(fileUriOf(root), 'prefix').replace(/\/+$/, ''));
    this.maxListEntries = opts.maxListEntries ?? 100_000;
  }

  write(uri: string, bytes: Uint8Array): Promise<void> {
    return guarded('write', async () => {
      await this.writeAtomically(uri, (file) => file.writeFile(bytes));
    });
  }

  writeStream(uri: string, source: AsyncIterable<Uint8Array>): Promise<{ bytes: number; sha256: string }> {
    return guarded('write', async () => {
      const hash = createHash('sha256');
      let bytes = 0;
      await this.writeAtomically(uri, async (file) => {
        for await (const chunk of source) {
          hash.update(chunk);
          bytes += chunk.byteLength;
          await file.write(chunk);
        }
      });
      return { bytes, sha256: hash.digest('hex') };
    });
  }

  /** Fills a temporary file beside the object, in a directory proved to have no symlink on its way, and renames it over. */
  private async writeAtomically(uri: string, fill: (file: FileHandle) => Promise<unknown>): Promise<void> {
    const path = this.pathOf(uri, 'object');
    const dir = dirname(path);
    const created = await noFollow(() => ensureDirectoryNoFollow(dir, { create: true }));
    const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
    let file: FileHandle;
    try {
      file = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    } catch (err) {
      await removeEmptyDirectories(created);
      throw err;
    }
    try {
      try {
        // The directory was checked a moment ago; the temporary file proves it was created there, not elsewhere.
        await noFollow(() => assertSamePath(file, temp));
        await fill(file);
        await file.sync();
      } finally {
        await file.close();
      }
      await noFollow(() => ensureDirectoryNoFollow(dir, { create: false }));
      await rename(temp, path);
    } catch (err) {
      await unlinkTempNoFollow(dir, temp);
      // A refused or failed write leaves nothing behind, not even the directories it made on its way.
      await removeEmptyDirectories(created);
      throw errnoOf(err) === 'EISDIR' ? notAnObject() : err;
    }
    await syncDirectory(dir);
  }

  read(uri: string): Promise<Buffer> {
    return guarded('read', async () => {
      const file = await this.openObject(uri);
      try {
        return await file.readFile();
      } finally {
        await file.close();
      }
    });
  }

  readStream(uri: string): Promise<DigestingStream> {
    return guarded('read', async () => {
      const file = await this.openObject(uri);
      let size: number;
      try {
        size = (await file.stat()).size;
      } catch (err) {
        await file.close();
        throw err;
      }
      return new DigestingStream(
        file.createReadStream(),
        (err) => (err instanceof StorageError ? err : new StorageError('io_failed', `file storage read failed mid-stream (${errnoOf(err) ?? 'unknown error'})`)),
        size,
      );
    });
  }

  /** Opens a regular file for reading with no symlink at any component of its path. */
  private openObject(uri: string): Promise<FileHandle> {
    const path = this.pathOf(uri, 'object');
    return noFollow(() => openNoFollow(path, 'file'));
  }

  remove(uri: string): Promise<boolean> {
    return guarded('remove', async () => {
      const path = this.pathOf(uri, 'object');
      const kind = await entryKindNoFollow(path);
      if (kind === 'none') return false;
      if (kind !== 'file') throw notAnObject();
      try {
        await unlink(path);
        return true;
      } catch (err) {
        if (errnoOf(err) === 'ENOENT') return false;
        throw err;
      }
    });
  }

  exists(uri: string): Promise<boolean> {
    return guarded('exists', async () => (await entryKindNoFollow(this.pathOf(uri, 'object'))) === 'file');
  }

  list(prefix: string): Promise<string[]> {
    return guarded('list', async () => (await this.walk(prefix, false)).map((o) => o.uri));
  }

  listObjects(prefix: string): Promise<StoredObject[]> {
    return guarded('list', () => this.walk(prefix, true));
  }

  /**
   * Every regular file whose path starts with the prefix's, sorted; with `sized`, each one's size by `lstat`
   * in the directory just proved, so a symlink swapped in for it is not counted (nor followed).
   */
  private async walk(prefix: string, sized: boolean): Promise<StoredObject[]> {
    const path = this.pathOf(prefix, 'prefix');
    const found: StoredObject[] = [];
    let visited = 0;
    const pending = [path.endsWith('/') ? path.slice(0, -1) || '/' : dirname(path)];
    while (pending.length > 0) {
      const dir = pending.pop()!;
      // Symlinks met as entries are skipped below; each directory read is first proved to have none on its way.
      try {
        await noFollow(() => ensureDirectoryNoFollow(dir, { create: false }));
      } catch (err) {
        if (isStorageError(err, 'not_found')) continue;
        throw err;
      }
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (err) {
        const code = errnoOf(err);
        if (code === 'ENOENT' || code === 'ENOTDIR') continue;
        throw err;
      }
      for (const entry of entries) {
        if (++visited > this.maxListEntries) throw new StorageError('too_many_objects', `listing visited more than ${this.maxListEntries} entries`);
        if (!isSafeSegment(entry.name)) continue;
        const full = dir === '/' ? `/${entry.name}` : `${dir}/${entry.name}`;
        // A directory is walked only when it can hold a match: it is under the prefix, or the prefix is under it.
        if (entry.isDirectory() && (full.startsWith(path) || path.startsWith(`${full}/`))) pending.push(full);
        else if (entry.isFile() && !TEMP_FILE.test(entry.name) && full.startsWith(path)) {
          if (!sized) found.push({ uri: fileUriOf(full), bytes: 0 });
          else {
            const size = await regularFileSize(full);
            if (size !== null) found.push({ uri: fileUriOf(full), bytes: size });
          }
        }
      }
    }
    return found.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
  }

  private pathOf(uri: string, use: FileUriUse): string {
    const path = filePathOf(uri, use);
    if (this.roots.length > 0 && !this.roots.some((root) => path === root || path.startsWith(`${root}/`))) {
      throw new StorageError('outside_root', 'storage URI is outside the directories this driver may use');
    }
    return path;
  }
}

function notAnObject(): StorageError {
  return new StorageError('not_an_object', 'the storage URI names a directory or a symlink, not an object');
}

function errnoOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

async function guarded<T>(operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof StorageError) throw err;
    throw new StorageError('io_failed', `file storage ${operation} failed (${errnoOf(err) ?? 'unknown error'})`);
  }
}

/**
 * What is at `path`, by `lstat` once its directory is proved to have no symlink at any component; a symlinked
 * directory on the way is refused (`not_an_object`), never looked through.
 */
async function entryKindNoFollow(path: string): Promise<'none' | 'file' | 'other'> {
  try {
    await noFollow(() => ensureDirectoryNoFollow(dirname(path), { create: false }));
  } catch (err) {
    if (isStorageError(err, 'not_found')) return 'none';
    throw err;
  }
  try {
    return (await lstat(path)).isFile() ? 'file' : 'other';
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'none';
    throw err;
  }
}

/** The size of the regular file at `path` by `lstat` (never followed); null when it is gone or no longer a file. */
async function regularFileSize(path: string): Promise<number | null> {
  try {
    const info = await lstat(path);
    return info.isFile() ? info.size : null;
  } catch (err) {
    // Removed between the listing and its size: it is not there to account for.
    if (errnoOf(err) === 'ENOENT') return null;
    throw err;
  }
}

/** Runs a walk of ./no-follow.ts, answering its refusals as this driver's: missing is `not_found`, the rest `not_an_object`. */
async function noFollow<T>(walk: () => Promise<T>): Promise<T> {
  try {
    return await walk();
  } catch (err) {
    if (!isNoFollowError(err)) throw err;
    if ((err as NoFollowError).reason === 'not_found') throw new StorageError('not_found', 'no object at that storage URI');
    throw new StorageError('not_an_object', 'the storage URI passes through a symlink or names something other than an object');
  }
}

/** Removes a failed write's temporary file, only when its directory is still the one that was checked. */
async function unlinkTempNoFollow(dir: string, temp: string): Promise<void> {
  try {
    await ensureDirectoryNoFollow(dir, { create: false });
    await unlink(temp);
  } catch {
    // Nothing to remove, or the directory is no longer what was checked: leave it rather than delete elsewhere.
  }
}

/** Makes the rename itself durable: without it a power loss can forget the new directory entry. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
