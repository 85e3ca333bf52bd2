import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { fileRefPath } from '@ito/domain';
import { NoFollowError, openNoFollow } from '@ito/storage';

/** The most files a directory data ref may hold: a bound on the work one manifest can ask of a worker. */
export const MAX_FILES_PER_REF = 100_000;

export interface RefDigest {
  sha256: string;
  bytes: number;
  files: number;
}

/**
 * The digest a `file://` data ref is declared by. A file: sha256 of its bytes. A directory (a ref ending in
 * `/`): sha256 over one line `<relative path>\0<sha256 of the file>\n` per regular file, sorted by path, so the
 * digest names the whole tree and nothing else. Every file and directory is opened with no symlink at any
 * component (@ito/storage's openNoFollow), and symlinks and special files inside a directory are refused: a
 * data set is bytes the owner put there, not a pointer elsewhere. The ref must already be inside the tenant's
 * file roots (checked by the caller); a path that is not normalised is refused here too.
 */
export async function digestFileRef(uri: string): Promise<RefDigest> {
  const path = fileRefPath(uri);
  if (path === null) throw new Error('the path is not normalised');
  const isDir = await isDirectoryNoFollow(path);
  if (!isDir) {
    const { sha256, bytes } = await hashFile(path);
    return { sha256, bytes, files: 1 };
  }
  const entries = await listTree(path);
  const outer = createHash('sha256');
  let bytes = 0;
  for (const rel of entries) {
    const file = await hashFile(join(path, rel));
    bytes += file.bytes;
    outer.update(`${rel}\u0000${file.sha256}\n`);
  }
  return { sha256: outer.digest('hex'), bytes, files: entries.length };
}

/** True for a directory, false for a regular file, opened without following a symlink; anything else refused. */
export async function isDirectoryNoFollow(path: string): Promise<boolean> {
  try {
    await (await openNoFollow(path, 'directory')).close();
    return true;
  } catch (err) {
    if (err instanceof NoFollowError && err.reason === 'not_a_directory') return false;
    throw err;
  }
}

/** The digest of a tree of files, as a directory data ref is declared by: one `<path>\0<sha256>\n` line per file, sorted. */
export function treeDigest(files: Array<{ rel: string; sha256: string }>): string {
  const outer = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0))) outer.update(`${f.rel}\u0000${f.sha256}\n`);
  return outer.digest('hex');
}

/** The bytes of a regular file, read from a descriptor opened with no symlink at any component. */
export async function* readNoFollow(path: string): AsyncGenerator<Buffer> {
  const handle = await openNoFollow(path, 'file');
  try {
    for await (const chunk of handle.createReadStream({ autoClose: false })) yield chunk as Buffer;
  } finally {
    await handle.close();
  }
}

async function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of readNoFollow(path)) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** Regular files under `root`, relative and sorted; a symlink or special file is refused. */
export async function listTree(root: string): Promise<string[]> {
  const out: string[] = [];
  const pending = [''];
  while (pending.length > 0) {
    const rel = pending.pop()!;
    const dir = rel === '' ? root : join(root, rel);
    // Each directory is proved symlink-free before it is read; each file is opened the same way when it is read.
    await (await openNoFollow(dir, 'directory')).close();
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const child = rel === '' ? entry.name : posix.join(rel, entry.name);
      if (entry.isSymbolicLink()) throw new Error(`${child} is a symlink`);
      if (entry.isDirectory()) pending.push(child);
      else if (entry.isFile()) out.push(child);
      else throw new Error(`${child} is not a regular file`);
      if (out.length > MAX_FILES_PER_REF) throw new Error(`more than ${MAX_FILES_PER_REF} files`);
    }
  }
  return out.sort();
}
