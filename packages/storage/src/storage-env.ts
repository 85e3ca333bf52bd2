import type { StorageSettings } from './registry.js';

/** The `ITO_S3_*` settings of a process's environment, as `@ito/config` parses them. */
export interface S3Environment {
  ITO_S3_REGION?: string | undefined;
  ITO_S3_ENDPOINT?: string | undefined;
  ITO_S3_PATH_STYLE: boolean;
  ITO_S3_ACCESS_KEY_ID?: string | undefined;
  ITO_S3_SECRET_ACCESS_KEY?: string | undefined;
  ITO_S3_SESSION_TOKEN?: string | undefined;
  ITO_S3_TIMEOUT_MS: number;
  ITO_S3_MAX_ATTEMPTS: number;
}

/**
 * The storage a process serves, from its own environment alone: `file://` always, and `s3://` when a region or
 * an endpoint is configured. Credentials are taken from ITO_S3_* when set, else from the AWS SDK's own chain;
 * they never come from a manifest or a task. The server and the agent read the same variables.
 */
export function storageSettingsFromEnv(env: S3Environment): StorageSettings {
  if (env.ITO_S3_REGION === undefined && env.ITO_S3_ENDPOINT === undefined) return {};
  return {
    s3: {
      region: env.ITO_S3_REGION ?? 'us-east-1',
      ...(env.ITO_S3_ENDPOINT ? { endpoint: env.ITO_S3_ENDPOINT } : {}),
      forcePathStyle: env.ITO_S3_PATH_STYLE,
      requestTimeoutMs: env.ITO_S3_TIMEOUT_MS,
      maxAttempts: env.ITO_S3_MAX_ATTEMPTS,
      ...(env.ITO_S3_ACCESS_KEY_ID && env.ITO_S3_SECRET_ACCESS_KEY
        ? {
            credentials: {
              accessKeyId: env.ITO_S3_ACCESS_KEY_ID,
              secretAccessKey: env.ITO_S3_SECRET_ACCESS_KEY,
              ...(env.ITO_S3_SESSION_TOKEN ? { sessionToken: env.ITO_S3_SESSION_TOKEN } : {}),
            },
          }
        : {}),
    },
  };
}
