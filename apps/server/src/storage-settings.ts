import type { ItoConfig } from '@ito/config';
import { checkpointStorageCheck, configuredStorageRegistry, type StorageRegistry, type StorageSettings } from '@ito/storage';

/**
 * The storage this server serves, from its environment alone: `file://` always, and `s3://` when a region or
 * an endpoint is configured. Credentials are taken from ITO_S3_* when set, else from the AWS SDK's own chain;
 * they never come from a manifest.
 */
export function storageSettingsOf(cfg: ItoConfig): StorageSettings {
  if (cfg.ITO_S3_REGION === undefined && cfg.ITO_S3_ENDPOINT === undefined) return {};
  return {
    s3: {
      region: cfg.ITO_S3_REGION ?? 'us-east-1',
      ...(cfg.ITO_S3_ENDPOINT ? { endpoint: cfg.ITO_S3_ENDPOINT } : {}),
      forcePathStyle: cfg.ITO_S3_PATH_STYLE,
      requestTimeoutMs: cfg.ITO_S3_TIMEOUT_MS,
      maxAttempts: cfg.ITO_S3_MAX_ATTEMPTS,
      ...(cfg.ITO_S3_ACCESS_KEY_ID && cfg.ITO_S3_SECRET_ACCESS_KEY
        ? {
            credentials: {
              accessKeyId: cfg.ITO_S3_ACCESS_KEY_ID,
              secretAccessKey: cfg.ITO_S3_SECRET_ACCESS_KEY,
              ...(cfg.ITO_S3_SESSION_TOKEN ? { sessionToken: cfg.ITO_S3_SESSION_TOKEN } : {}),
            },
          }
        : {}),
    },
  };
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
