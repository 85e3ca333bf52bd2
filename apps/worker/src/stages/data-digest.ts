import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ReadBudget } from '@ito/dataprep';

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
 * digest names the whole tree and nothing else. Symlinks and special files are refused: a data set is bytes
 * the owner put there, not a pointer elsewhere. A ref whose files' sizes pass `limits.maxBytes` is refused before
 * any byte is read, and bytes are counted while reading too (a file may grow, or report less than it holds).
 */
export async function digestFileRef(uri: string, limits: ReadLimits = { maxBytes: Number.MAX_SAFE_INTEGER }): Promise<RefDigest> {
  const path = fileURLToPath(uri);
  if (uri.includes('\u0000') || path.split('/').includes('..')) throw new Error('the path is not normalised');
  const info = await lstat(path);
  if (info.isSymbolicLink()) throw new Error('the path is a symlink');
  const budget = new ReadBudget(limits.maxBytes, 'bytes');
  if (info.isFile()) {
    budget.wouldFit(info.size);
    const sha256 = await hashFile(path, budget, limits.signal);
    return { sha256, bytes: info.size, files: 1 };
  }
  if (!info.isDirectory()) throw new Error('the path is neither a file nor a directory');
  const entries = await listTree(path);
  const outer = createHash('sha256');
  let bytes = 0;
  for (const rel of entries) {
    limits.signal?.throwIfAborted();
    bytes += (await lstat(join(path, rel))).size;
  }
  budget.wouldFit(bytes);
  for (const rel of entries) outer.update(`${rel}\u0000${await hashFile(join(path, rel), budget, limits.signal)}\n`);
  return { sha256: outer.digest('hex'), bytes, files: entries.length };
}

/** The digest of a tree of files, as a directory data ref is declared by: one `<path>\0<sha256>\n` line per file, sorted. */
export function treeDigest(files: Array<{ rel: string; sha256: string }>): string {
  const outer = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0))) outer.update(`${f.rel}\u0000${f.sha256}\n`);
  return outer.digest('hex');
}

async function hashFile(path: string, budget: ReadBudget, signal: AbortSignal | undefined): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of readChunks(path, budget, signal)) hash.update(chunk);
  return hash.digest('hex');
}

/**
 * A file's bytes, chunk by chunk, each counted against `budget` before it is handed on; an aborted `signal`
 * destroys the stream, so the read stops within one chunk.
 */
export async function* readChunks(path: string, budget: ReadBudget, signal: AbortSignal | undefined): AsyncGenerator<Buffer> {
  for await (const chunk of createReadStream(path, signal ? { signal } : {})) {
    signal?.throwIfAborted();
    budget.take((chunk as Buffer).length);
    yield chunk as Buffer;
  }
}

/** Regular files under `root`, relative and sorted; a symlink or special file is refused. */
export async function listTree(root: string): Promise<string[]> {
  const out: string[] = [];
  const pending = [''];
  while (pending.length > 0) {
    const rel = pending.pop()!;
    for (const entry of await readdir(join(root, rel), { withFileTypes: true })) {
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
