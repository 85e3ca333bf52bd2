import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { TaskSpec } from '@ito/contracts';
import type { StorageRegistry } from '@ito/storage';
import { downloadFile, TransferError } from './checkpoint-transfer.js';

/** Where the agent puts the run's prepared data, inside the task's directory (`ITO_DATA_DIR`). */
export const DATA_DIR = 'data';

/** The shards a trainer reads: data prep's JSON lines and plain text, never its reports or hidden files. */
const SHARD = /\/[^/.][^/]*\.(jsonl|txt)$/;

export interface PreparedDataLimits {
  /** The most bytes of prepared data one task may take onto the node; shards past it are left in storage. */
  maxDataBytes: number;
  /** Wall ms for all of the task's shards together. */
  timeoutMs: number;
}

/**
 * Brings the shards data prep wrote for the run (`<storage>/<run id>/data/`) onto the node before a training
 * task starts, when they are on a store the trainer cannot open itself (anything but `file://`, which a trainer
 * on a shared disk reads in place). Each shard is downloaded, bounded in size and time, to a file of the agent's
 * own naming (`00000.jsonl`, … in the store's key order), so no key of the store becomes a path on the node.
 * Answers the environment naming the directory (`ITO_DATA_DIR`), or nothing when there is nothing to bring.
 * Rejects with a {@link TransferError} when a shard cannot be had: a trainer must not silently train on less.
 */
export async function stagePreparedData(
  spec: TaskSpec,
  taskDir: string,
  storage: StorageRegistry,
  limits: PreparedDataLimits,
  log: (line: string) => void,
): Promise<Record<string, string>> {
  if (spec.kind !== 'train' && spec.kind !== 'ladder') return {};
  const base = spec.checkpoint.storage.replace(/\/+$/, '');
  if (base.startsWith('file://') || !storage.supports(base)) return {};
  const prefix = `${base}/${spec.run_id}/data/`;
  let objects;
  try {
    objects = (await storage.driverFor(prefix).listObjects(prefix)).filter((o) => SHARD.test(o.uri));
  } catch {
    throw new TransferError("the run's prepared data could not be listed");
  }
  if (objects.length === 0) return {};
  const dir = join(taskDir, DATA_DIR);
  await mkdir(dir, { mode: 0o700 });
  let taken = 0;
  let bytes = 0;
  const started = performance.now();
  for (const [i, object] of objects.entries()) {
    if (bytes + object.bytes > limits.maxDataBytes) break;
    const name = `${String(i).padStart(5, '0')}.${object.uri.endsWith('.txt') ? 'txt' : 'jsonl'}`;
    const remaining = limits.timeoutMs - (performance.now() - started);
    if (remaining <= 0) throw new TransferError("the run's prepared data timed out");
    let got;
    try {
      got = await downloadFile(storage, object.uri, join(dir, name), { maxBytes: limits.maxDataBytes - bytes, timeoutMs: remaining });
    } catch (err) {
      throw new TransferError(`a shard of the run's prepared data could not be downloaded: ${(err as Error).message}`);
    }
    bytes += got.bytes;
    taken += 1;
  }
  const left = objects.length - taken;
  log(`downloaded ${taken} shard(s) of the run's prepared data, ${bytes} bytes${left > 0 ? `; ${left} left in storage past the agent's bound of ${limits.maxDataBytes} bytes` : ''}`);
  return { ITO_DATA_DIR: dir };
}
