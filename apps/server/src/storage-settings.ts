import type { ItoConfig } from '@ito/config';
import { checkpointStorageCheck, configuredStorageRegistry, storageSettingsFromEnv, type StorageRegistry, type StorageSettings } from '@ito/storage';

/** The storage this server serves, from its environment alone (`ITO_S3_*`; see `storageSettingsFromEnv`). */
export function storageSettingsOf(cfg: ItoConfig): StorageSettings {
  return storageSettingsFromEnv(cfg);
}

export function storageRegistryOf(cfg: ItoConfig): StorageRegistry {
  return configuredStorageRegistry(storageSettingsOf(cfg));
}

/** The confirmation request's check of a run's checkpoint storage, bounded by ITO_STORAGE_PROBE_TIMEOUT_MS. */
export function checkpointStorageCheckOf(cfg: ItoConfig, registry: StorageRegistry): (prefix: string) => Promise<void> {
  return checkpointStorageCheck(registry, {
    timeoutMs: cfg.ITO_STORAGE_PROBE_TIMEOUT_MS,
    simulatedSchemes: cfg.ITO_STORAGE_SIMULATED_SCHEMES?.split(',') ?? [],
  });
}
