import { randomBytes } from 'node:crypto';
import { schemeOf, type StorageRegistry } from './registry.js';
import { StorageError, isStorageError } from './storage-error.js';

export interface ProbeOptions {
  /** The whole probe (write, read back, delete) must finish within this. @defaultValue 10_000 ms */
  timeoutMs?: number;
}

/**
 * Shows that a checkpoint storage prefix is really usable by this process: it writes a small marker object under
 * the prefix, reads it back and compares the bytes, and deletes it. A scheme with no driver here is refused as
 * `unsupported_scheme` (naming the schemes there are); a URI the driver refuses keeps its own reason; anything
 * else (no such bucket, no permission, a store that does not answer in time) is `unreachable`, with the store's
 * error name but never its URI.
 */
export async function probeStoragePrefix(registry: StorageRegistry, prefix: string, opts: ProbeOptions = {}): Promise<void> {
  const driver = registry.driverFor(prefix);
  const base = prefix.endsWith('/') ? prefix : `${prefix}/`;
  const marker = `${base}.ito-probe-${randomBytes(8).toString('hex')}`;
  const bytes = Buffer.from(`ito storage probe ${randomBytes(16).toString('hex')}\n`);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StorageError('unreachable', `checkpoint storage did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  const probe = (async () => {
    await driver.write(marker, bytes);
    try {
      const back = await driver.read(marker);
      if (!back.equals(bytes)) throw new StorageError('unreachable', 'checkpoint storage returned other bytes than were written');
    } finally {
      await driver.remove(marker);
    }
  })();
  try {
    await Promise.race([probe, deadline]);
  } catch (err) {
    // A probe past its deadline still finishes (or fails) on its own, bounded by the driver's timeouts; its
    // outcome no longer matters and must not surface as an unhandled rejection.
    probe.catch(() => undefined);
    if (isStorageError(err) && err.reason !== 'io_failed' && err.reason !== 'not_found') throw err;
    throw new StorageError('unreachable', `checkpoint storage could not be written, read back and cleared (${isStorageError(err) ? err.message : 'unknown error'})`);
  } finally {
    clearTimeout(timer);
  }
}

export interface CheckpointStorageCheckOptions extends ProbeOptions {
  /**
   * Schemes accepted with no driver because nothing is written there (the simulated executor of the demo and
   * tests). @defaultValue none
   */
  simulatedSchemes?: string[];
}

/**
 * What the server asks of a run's checkpoint storage before an approver is asked to allow the run: a scheme it
 * has a driver for, and a prefix it can really write, read back and clear ({@link probeStoragePrefix}). A scheme
 * with no driver is refused (`unsupported_scheme`, naming the schemes there are), so it is never discovered
 * mid-run.
 */
export function checkpointStorageCheck(registry: StorageRegistry, opts: CheckpointStorageCheckOptions = {}): (prefix: string) => Promise<void> {
  const simulated = new Set(opts.simulatedSchemes ?? []);
  return async (prefix) => {
    const scheme = schemeOf(prefix);
    if (scheme !== null && !registry.supports(prefix) && simulated.has(scheme)) return;
    await probeStoragePrefix(registry, prefix, opts);
  };
}
