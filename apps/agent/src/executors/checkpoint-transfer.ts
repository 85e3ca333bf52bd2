import { constants } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { isNoFollowError, isStorageError, openNoFollow, type StorageRegistry } from '@ito/storage';

/** How far one checkpoint transfer may go: its bytes, and its wall time from start to end. */
export interface TransferLimits {
  maxBytes: number;
  timeoutMs: number;
}

/**
 * A transfer refused or failed, with a reason fit for the agent's log: it names what went wrong, never a path, a
 * URI or a message of the store (which may carry a key).
 */
export class TransferError extends Error {
  override readonly name = 'TransferError';
}

const CHUNK_BYTES = 1024 * 1024;

/**
 * Uploads the regular file at the absolute `path` to the object `uri` through the registry's driver, atomically
 * (the driver's promise: a failure leaves no object, or the previous one). The file is opened with no symlink at
 * any component of its path; it may not be, or grow while read, past `maxBytes`; the whole upload has
 * `timeoutMs`. Resolves to the bytes the store took and the wall seconds it took.
 */
export async function uploadFile(storage: StorageRegistry, path: string, uri: string, limits: TransferLimits): Promise<{ bytes: number; seconds: number }> {
  const started = performance.now();
  const driver = guard(() => storage.driverFor(uri));
  let handle: FileHandle;
  try {
    handle = await openNoFollow(path, 'file');
  } catch (err) {
    throw asTransferError(err);
  }
  let writing: Promise<{ bytes: number }> | null = null;
  try {
    if ((await handle.stat()).size > limits.maxBytes) throw new TransferError(`the checkpoint is larger than the agent's bound of ${limits.maxBytes} bytes`);
    const stream = handle.createReadStream({ autoClose: false, highWaterMark: CHUNK_BYTES });
    writing = driver.writeStream(uri, capped(stream, limits.maxBytes));
    const written = await withDeadline(writing, limits.timeoutMs, () => stream.destroy(new TransferError('timed out')));
    return { bytes: written.bytes, seconds: (performance.now() - started) / 1000 };
  } catch (err) {
    throw asTransferError(err);
  } finally {
    // The descriptor is closed once the driver has let go of the stream (at once when no write began).
    const close = () => void handle.close().catch(() => undefined);
    if (writing) writing.then(close, close);
    else close();
  }
}

/**
 * Downloads the object `uri` into a new file at the absolute `path` (created exclusively, mode 0600, never
 * through a symlink at its last component), within `maxBytes` and `timeoutMs`; a failure leaves no file.
 * Resolves to the bytes read and the wall seconds it took.
 */
export async function downloadFile(storage: StorageRegistry, uri: string, path: string, limits: TransferLimits): Promise<{ bytes: number; seconds: number }> {
  const started = performance.now();
  const driver = guard(() => storage.driverFor(uri));
  let stopped = false;
  let file: FileHandle | null = null;
  try {
    const source = await withDeadline(driver.readStream(uri), limits.timeoutMs, () => undefined);
    if (source.size !== null && source.size > limits.maxBytes) throw new TransferError(`the checkpoint is larger than the agent's bound of ${limits.maxBytes} bytes`);
    file = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    const target = file;
    let bytes = 0;
    const copy = async () => {
      for await (const chunk of source) {
        if (stopped) break;
        bytes += chunk.length;
        if (bytes > limits.maxBytes) throw new TransferError(`the checkpoint is larger than the agent's bound of ${limits.maxBytes} bytes`);
        await target.write(chunk);
      }
      await target.sync();
    };
    await withDeadline(copy(), limits.timeoutMs - (performance.now() - started), () => (stopped = true));
    return { bytes, seconds: (performance.now() - started) / 1000 };
  } catch (err) {
    stopped = true;
    await rm(path, { force: true }).catch(() => undefined);
    throw asTransferError(err);
  } finally {
    await file?.close().catch(() => undefined);
  }
}

/** The chunks of `source`, refused once they add up past `max` (a file that grows while it is read). */
async function* capped(source: AsyncIterable<Uint8Array>, max: number): AsyncGenerator<Uint8Array> {
  let bytes = 0;
  for await (const chunk of source) {
    bytes += chunk.byteLength;
    if (bytes > max) throw new TransferError(`the checkpoint grew past the agent's bound of ${max} bytes while it was uploaded`);
    yield chunk;
  }
}

/** `work`, or a TransferError once `ms` have passed (after `onTimeout`, which should make `work` let go). */
function withDeadline<T>(work: Promise<T>, ms: number, onTimeout: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => {
        onTimeout();
        reject(new TransferError('timed out'));
      },
      Math.max(0, ms),
    );
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err as Error);
      },
    );
  });
}

function guard<T>(get: () => T): T {
  try {
    return get();
  } catch (err) {
    throw asTransferError(err);
  }
}

/** Reasons that say what failed and never echo a path, a URI or a store's own message. */
export function asTransferError(err: unknown): TransferError {
  if (err instanceof TransferError) return err;
  // Storage errors are written never to name a URI, a key or a credential (packages/storage).
  if (isStorageError(err)) return new TransferError(err.message);
  if (isNoFollowError(err)) return new TransferError(err.reason === 'not_found' ? 'no such file' : `refused: ${err.reason.replace(/_/g, ' ')}`);
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return new TransferError(typeof code === 'string' && /^[A-Z0-9_]{1,32}$/.test(code) ? `failed (${code})` : 'failed');
}
