import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { ReadBudget } from '@ito/dataprep';
import { fileRefPath } from '@ito/domain';
import { NoFollowError, openNoFollow } from '@ito/storage';

/** The most files a directory data ref may hold: a bound on the work one manifest can ask of a worker. */
export const MAX_FILES_PER_REF = 100_000;

/** What one read of a ref may take: its byte bound, and the signal that stops it when the run ends. */
export interface ReadLimits {
  maxBytes: number;
  signal?: AbortSignal | undefined;
}

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
 * file roots (checked by the caller); a path that is not normalised is refused here too. A ref whose files'
 * sizes (taken from the descriptors the walk opened) pass `limits.maxBytes` is refused before any byte is read,
 * and bytes are counted while reading too (a file may grow, or report less than it holds).
 */
export async function digestFileRef(uri: string, limits: ReadLimits = { maxBytes: Number.MAX_SAFE_INTEGER }): Promise<RefDigest> {
  const path = fileRefPath(uri);
  if (path === null) throw new Error('the path is not normalised');
  const budget = new ReadBudget(limits.maxBytes, 'bytes');
  const isDir = await isDirectoryNoFollow(path);
  if (!isDir) {
    budget.wouldFit(await sizeNoFollow(path));
    const { sha256, bytes } = await hashFile(path, budget, limits.signal);
    return { sha256, bytes, files: 1 };
  }
  const entries = await listTree(path);
  const outer = createHash('sha256');
  let bytes = 0;
  for (const rel of entries) {
    limits.signal?.throwIfAborted();
    bytes += await sizeNoFollow(join(path, rel));
  }
  budget.wouldFit(bytes);
  // The bytes recorded are the bytes hashed: a file may have changed size since its size was taken.
  let read = 0;
  for (const rel of entries) {
    const file = await hashFile(join(path, rel), budget, limits.signal);
    read += file.bytes;
    outer.update(`${rel}\u0000${file.sha256}\n`);
  }
  return { sha256: outer.digest('hex'), bytes: read, files: entries.length };
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

/** The size of a regular file, from a descriptor opened with no symlink at any component: never another file's. */
async function sizeNoFollow(path: string): Promise<number> {
  const handle = await openNoFollow(path, 'file');
  try {
    return (await handle.stat()).size;
  } finally {
    await handle.close();
  }
}

/**
 * The bytes of a regular file, read from a descriptor opened with no symlink at any component. An aborted
 * `signal` stops the read at the next chunk. It is checked here, chunk by chunk, rather than handed to the stream:
 * on Node 22 a stream destroyed by its signal can raise its AbortError outside the loop reading it.
 */
export async function* readNoFollow(path: string, signal?: AbortSignal): AsyncGenerator<Buffer> {
  signal?.throwIfAborted();
  const handle = await openNoFollow(path, 'file');
  try {
    for await (const chunk of handle.createReadStream({ autoClose: false })) {
      signal?.throwIfAborted();
      yield chunk as Buffer;
    }
  } finally {
    await handle.close();
  }
}

async function hashFile(path: string, budget: ReadBudget, signal: AbortSignal | undefined): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of readChunks(path, budget, signal)) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** A file's bytes (opened as {@link readNoFollow} does), each chunk counted against `budget` before it is handed on. */
export function readChunks(path: string, budget: ReadBudget, signal: AbortSignal | undefined): AsyncGenerator<Buffer> {
  return countedChunks(readNoFollow(path, signal), budget, signal);
}

/**
 * Any source's bytes (a file's, or a stored object's as its driver streams them), each chunk counted against
 * `budget` before it is handed on, and `signal` checked at every chunk, so a read past its bound or of a run
 * that ended stops within one chunk; leaving the loop closes the source. `declaredBytes` (the size a store
 * declared for the object) is held against the bound at the first chunk, before the rest is read.
 */
export async function* countedChunks(
  chunks: AsyncIterable<Uint8Array>,
  budget: ReadBudget,
  signal: AbortSignal | undefined,
  declaredBytes: number | null = null,
): AsyncGenerator<Buffer> {
  // The signal is checked once a chunk is in hand, not before the first: a source is only closed by leaving a loop over it.
  let first = true;
  for await (const chunk of chunks) {
    signal?.throwIfAborted();
    if (first && declaredBytes !== null) budget.wouldFit(declaredBytes);
    first = false;
    budget.take(chunk.byteLength);
    yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  }
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
