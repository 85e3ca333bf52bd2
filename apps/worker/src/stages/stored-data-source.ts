import { posix } from 'node:path';
import { DataRefTooLargeError, ReadBudget } from '@ito/dataprep';
import { isStorageError, schemeOf, type StorageDriver, type StorageRegistry } from '@ito/storage';
import { MAX_FILES_PER_REF, countedChunks, treeDigest, type ReadLimits } from './data-digest.js';

/**
 * Data refs held in an object store (`s3://…`) rather than on the worker's disk. They are read through the
 * storage driver, so data prep treats them exactly as `file://` refs: an object ref is one shard, a prefix ref
 * (ending in `/`) is every object under it, named by its key relative to the prefix as a file is by its path
 * relative to its directory. The digests are the ones a file ref is declared by, so a data set copied from a
 * disk to a bucket keeps its sha256. They are bounded as file refs are: the sizes the store lists or declares
 * (Content-Length) are held against the ref's byte bound before the bytes are read, every chunk is counted as it
 * arrives (a store may declare less than it sends), and the run's signal is checked at every chunk.
 */

/** True when `ref` is read through a storage driver of this worker rather than as a local file. */
export function isStoredRef(ref: string, storage: StorageRegistry): boolean {
  const scheme = schemeOf(ref);
  return scheme !== null && scheme !== 'file' && storage.supports(ref);
}

export interface StoredShards {
  isPrefix: boolean;
  /** Shard names: keys relative to the prefix (sorted), or the object's last segment. */
  shards: string[];
  /** The bytes of one shard as they arrive, counted against `budget` and stopped by `signal`. */
  open(rel: string, budget: ReadBudget, signal: AbortSignal | undefined): AsyncIterable<Buffer>;
}

/** What a stored ref holds, as data prep reads it; `exclude` (the decontamination report) is never a shard. */
export async function storedShardsOf(ref: string, storage: StorageRegistry, keep: (rel: string) => boolean, exclude: string | null): Promise<StoredShards> {
  const driver = storage.driverFor(ref);
  if (!ref.endsWith('/')) {
    return { isPrefix: false, shards: [posix.basename(ref)].filter(keep), open: (_rel, budget, signal) => boundedRead(driver, ref, budget, signal) };
  }
  const objects = await listUnder(storage, ref);
  const shards = objects.filter((o) => o.uri !== exclude).map((o) => o.uri.slice(ref.length)).filter(keep);
  return { isPrefix: true, shards, open: (rel, budget, signal) => boundedRead(driver, `${ref}${rel}`, budget, signal) };
}

/**
 * Opened when iterated, so a shard costs a request only when data prep reaches it. The object's declared size is
 * held against the bound at its first chunk (the stream is open then, so leaving the loop closes the body).
 */
async function* boundedRead(driver: StorageDriver, uri: string, budget: ReadBudget, signal: AbortSignal | undefined): AsyncGenerator<Buffer> {
  signal?.throwIfAborted();
  const stream = await driver.readStream(uri);
  yield* countedChunks(stream, budget, signal, stream.size);
}

/**
 * The declared digest of a stored ref, each object streamed once and hashed as its bytes pass: an object's
 * sha256, or for a prefix the tree digest over `<key relative to the prefix>\0<sha256>\n` lines, sorted. A ref
 * past `limits.maxBytes` is refused naming the bound, never its size; an abort is thrown to the caller.
 */
export async function digestStoredRef(
  ref: string,
  storage: StorageRegistry,
  limits: ReadLimits = { maxBytes: Number.MAX_SAFE_INTEGER },
): Promise<{ sha256: string; bytes: number } | { error: string } | { tooLarge: string }> {
  const budget = new ReadBudget(limits.maxBytes, 'bytes');
  try {
    const driver = storage.driverFor(ref);
    if (!ref.endsWith('/')) return await digestObject(driver, ref, budget, limits.signal);
    const objects = await listUnder(storage, ref);
    if (objects.length === 0) return { error: 'no object under that prefix' };
    // The sizes the listing gave: a prefix past its bound is refused before one object is read.
    budget.wouldFit(objects.reduce((sum, o) => sum + o.bytes, 0));
    const files: Array<{ rel: string; sha256: string }> = [];
    let bytes = 0;
    for (const object of objects) {
      const d = await digestObject(driver, object.uri, budget, limits.signal);
      bytes += d.bytes;
      files.push({ rel: object.uri.slice(ref.length), sha256: d.sha256 });
    }
    return { sha256: treeDigest(files), bytes };
  } catch (err) {
    // The run ending or the worker stopping is not a fact about the data: the caller decides.
    if (limits.signal?.aborted) throw limits.signal.reason;
    if (err instanceof DataRefTooLargeError) return { tooLarge: err.message };
    // A store that failed (down, cut off mid-stream, timed out) is thrown, so the stage job retries it; a ref that
    // is not there or not allowed is the manifest's fault, refused. A StorageError's message never names the URI.
    if (isStorageError(err, 'io_failed')) throw err;
    return { error: err instanceof Error ? err.message : 'unknown error' };
  }
}

async function digestObject(driver: StorageDriver, uri: string, budget: ReadBudget, signal: AbortSignal | undefined): Promise<{ sha256: string; bytes: number }> {
  signal?.throwIfAborted();
  const stream = await driver.readStream(uri);
  for await (const _chunk of countedChunks(stream, budget, signal, stream.size));
  return { sha256: stream.sha256(), bytes: stream.bytes };
}

async function listUnder(storage: StorageRegistry, prefix: string) {
  const objects = await storage.driverFor(prefix).listObjects(prefix);
  if (objects.length > MAX_FILES_PER_REF) throw new Error(`more than ${MAX_FILES_PER_REF} objects`);
  return objects;
}
