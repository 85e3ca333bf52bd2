import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configuredStorageRegistry } from '@ito/storage';
import { storageCheckpointRemover } from '../src/checkpoint-remover.js';

// An S3 driver aimed at a port nothing listens on: any request it made would fail the test.
const unreachable = configuredStorageRegistry({ s3: { endpoint: 'http://127.0.0.1:9', forcePathStyle: true, credentials: { accessKeyId: 'x', secretAccessKey: 'y' }, maxAttempts: 1, connectTimeoutMs: 200 } });

describe('checkpoint removal', () => {
  it('never reaches a store for a checkpoint the simulated executor only modelled, even where a driver exists', async () => {
    const remover = storageCheckpointRemover(unreachable);
    await expect(remover.remove({ uri: 's3://acme-checkpoints/run_1/pretrain/step-10', simulated: true })).resolves.toEqual({ existed: false });
    await expect(remover.remove({ uri: 's3://acme-checkpoints/run_1/pretrain/step-10' })).rejects.toMatchObject({ code: 'internal_error' });
  });

  it('removes a real checkpoint through its driver and says whether it was there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ito-remover-'));
    try {
      writeFileSync(join(dir, 'step-10'), 'bytes');
      const remover = storageCheckpointRemover(unreachable);
      await expect(remover.remove({ uri: `file://${dir}/step-10` })).resolves.toEqual({ existed: true });
      expect(existsSync(join(dir, 'step-10'))).toBe(false);
      await expect(remover.remove({ uri: `file://${dir}/step-10` })).resolves.toEqual({ existed: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
