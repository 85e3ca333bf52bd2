import { describe, expect, it } from 'vitest';
import { loadConfig } from '@ito/config';
import { ItoError } from '@ito/contracts';
import { checkpointStorageCheckOf, storageRegistryOf, storageSettingsOf } from '../src/storage-settings.js';
import { refusalOf } from '../../../test/support/refusal.js';

const refusal = (run: () => Promise<unknown>) => refusalOf(ItoError, run);

describe('the server`s storage, from its environment', () => {
  it('serves s3:// only when a region or an endpoint is configured, with credentials only when both halves are set', () => {
    expect(storageSettingsOf(loadConfig({}))).toEqual({});
    expect(storageRegistryOf(loadConfig({})).schemes()).toEqual(['file']);
    const cfg = loadConfig({ ITO_S3_ENDPOINT: 'http://127.0.0.1:9000', ITO_S3_PATH_STYLE: '1', ITO_S3_ACCESS_KEY_ID: 'AKIDTEST', ITO_S3_SECRET_ACCESS_KEY: 'secret-test', ITO_S3_MAX_ATTEMPTS: '2' });
    expect(storageSettingsOf(cfg)).toEqual({
      s3: {
        region: 'us-east-1',
        endpoint: 'http://127.0.0.1:9000',
        forcePathStyle: true,
        requestTimeoutMs: 30_000,
        maxAttempts: 2,
        credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret-test' },
      },
    });
    expect(storageRegistryOf(cfg).schemes()).toEqual(['file', 's3']);
    // No static credentials: the SDK's own chain (AWS_* variables, an instance role) supplies them.
    expect(storageSettingsOf(loadConfig({ ITO_S3_REGION: 'eu-west-1' })).s3).not.toHaveProperty('credentials');
  });

  it('refuses at the confirmation request a scheme it has no driver for, unless the deployment declares it simulated', async () => {
    const bare = loadConfig({});
    const check = checkpointStorageCheckOf(bare, storageRegistryOf(bare));
    const err = await refusal(() => check('s3://acme-checkpoints/code-8b/'));
    expect(err.code).toBe('checkpoint_storage_invalid');
    expect(err.message).toBe('no storage driver for s3:// on this host (available: file://)');

    const demo = loadConfig({ ITO_STORAGE_SIMULATED_SCHEMES: 's3' });
    const simulated = checkpointStorageCheckOf(demo, storageRegistryOf(demo));
    await expect(simulated('s3://acme-checkpoints/code-8b/')).resolves.toBeUndefined();
    expect((await refusal(() => simulated('gs://acme-checkpoints/code-8b/'))).code).toBe('checkpoint_storage_invalid');
  });
});
