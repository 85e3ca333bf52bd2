import { readFile } from 'node:fs/promises';
import type pg from 'pg';
import type { ItoConfig, Logger } from '@ito/config';
import { createEvalBatteryRegistry, type EvalBatteryRegistry } from '@ito/evals';
import { createLedger } from '@ito/ledger';
import type { StorageRegistry } from '@ito/storage';

/**
 * The eval batteries this build ships (apps/server/batteries): the example manifests name `ito-evals/v1`, and
 * the domain knows its metrics. Registered by the API role at start when no battery of that name is, so a fresh
 * install can confirm the examples; an operator adds others with `ito-admin battery add`.
 */
export const SHIPPED_BATTERIES: ReadonlyArray<{ name: string; file: URL }> = [{ name: 'ito-evals/v1', file: new URL('../batteries/ito-evals/v1.jsonl', import.meta.url) }];

/** The registry over this server's ledger and the operator's storage (ITO_OPERATOR_STORAGE). */
export function batteryRegistryOf(cfg: ItoConfig, pool: pg.Pool, storage: StorageRegistry): EvalBatteryRegistry {
  return createEvalBatteryRegistry({ pool, ledger: createLedger({ pool }), storage, operatorStorage: cfg.ITO_OPERATOR_STORAGE });
}

/**
 * Registers each shipped battery whose name is free (a name is never replaced: an operator's own registration of
 * it stands). A failure (the operator's storage unreachable) is logged, not fatal: the API still serves, and a
 * manifest naming an unregistered battery is refused at its confirmation request.
 */
export async function registerShippedBatteries(registry: EvalBatteryRegistry, logger: Logger): Promise<void> {
  for (const shipped of SHIPPED_BATTERIES) {
    try {
      const r = await registry.register(shipped.name, await readFile(shipped.file), { ifAbsent: true, actor: 'ito-server' });
      if (r.created) logger.info({ battery: r.name, sha256: r.sha256, items: r.items }, 'registered the shipped eval battery');
    } catch (err) {
      logger.warn({ battery: shipped.name, err: { message: (err as Error).message } }, 'could not register the shipped eval battery');
    }
  }
}
