import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ItoError } from '@ito/contracts';
import type { ItoConfig } from '@ito/config';
import type { EvalBatteryRegistry } from '@ito/evals';
import type { ParsedCommand } from '../args/parse.js';
import { keyValue, table } from '../human/format.js';
import type { AdminResult } from './admin-result.js';

/** A battery file is at most this (the registry's own bound, repeated so a larger file is refused before it is read). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** The registry over the ledger database and the operator's storage (ITO_OPERATOR_STORAGE, with ITO_S3_* for s3://). */
export async function openBatteryRegistry(pool: import('pg').Pool, config: ItoConfig): Promise<EvalBatteryRegistry> {
  const [{ createEvalBatteryRegistry }, { configuredStorageRegistry, storageSettingsFromEnv }, { createLedger }] = await Promise.all([
    import('@ito/evals'),
    import('@ito/storage'),
    import('@ito/ledger'),
  ]);
  return createEvalBatteryRegistry({ pool, ledger: createLedger({ pool }), storage: configuredStorageRegistry(storageSettingsFromEnv(config)), operatorStorage: config.ITO_OPERATOR_STORAGE });
}

/**
 * The items file named by --file: a regular file (a symlink is refused, not followed) no larger than the bound,
 * checked on the open descriptor before a byte is read. Its path is the operator's own and may be named.
 */
async function readItemsFile(path: string): Promise<Buffer> {
  let handle;
  try {
    handle = await open(resolve(path), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ItoError('eval_battery_invalid', code === 'ELOOP' ? 'the items file is a symlink; name the file itself' : `the items file cannot be opened (${code ?? 'error'})`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new ItoError('eval_battery_invalid', 'the items file is not a regular file');
    if (stat.size > MAX_FILE_BYTES) throw new ItoError('eval_battery_invalid', `the items file is larger than ${MAX_FILE_BYTES} bytes`);
    const buffer = Buffer.alloc(MAX_FILE_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > MAX_FILE_BYTES) throw new ItoError('eval_battery_invalid', `the items file is larger than ${MAX_FILE_BYTES} bytes`);
    }
    return buffer.subarray(0, length);
  } finally {
    await handle.close();
  }
}

const registrationHuman = (d: Record<string, unknown>) => keyValue({ name: d.name, sha256: d.sha256, items: d.items, bytes: d.bytes, registered_at: d.registered_at });

/** `ito-admin battery add|list`, on the registry the caller opened. */
export async function batteryCommand(cmd: ParsedCommand, registry: EvalBatteryRegistry): Promise<AdminResult> {
  const action = cmd.verb.name === 'battery add' ? 'add' : 'list';
  if (action === 'list') {
    const batteries = await registry.list();
    return { data: { batteries }, human: (d) => (batteries.length === 0 ? 'no eval battery is registered\n' : `${table(d.batteries as Record<string, unknown>[], ['name', 'items', 'sha256', 'registered_at'])}\n`) };
  }
  const name = cmd.positionals[0]!;
  const file = cmd.flags.file;
  if (typeof file !== 'string') throw new ItoError('validation_failed', 'missing --file');
  const bytes = await readItemsFile(file);
  const { created: _created, ...registered } = await registry.register(name, bytes, { actor: 'ito-admin' });
  return { data: registered, human: registrationHuman };
}
