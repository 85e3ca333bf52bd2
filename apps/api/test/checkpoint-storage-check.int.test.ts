import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestDigest } from '@ito/contracts';
import { S3StorageDriver, checkpointStorageCheck, configuredStorageRegistry } from '@ito/storage';
import { EXAMPLE_MANIFEST, footprint, seedTenant, startApi, type Api } from '../../../test/support/api.js';
import { startS3Server, type TestS3Server } from '../../../test/support/s3-server.js';

let s3: TestS3Server;
let api: Api;
let silent: Server;
let silentPort: number;
const held: Socket[] = [];

/** The example manifest with its checkpoint storage moved to `storage`. */
function storedAt(storage: string): string {
  const m = JSON.parse(EXAMPLE_MANIFEST);
  m.checkpoint.storage = storage;
  return JSON.stringify(m, null, 2);
}

beforeAll(async () => {
  s3 = await startS3Server(['ito-ckpt']);
  // A store that accepts connections and never answers: the probe must give up on its own deadline.
  silent = createServer((socket) => held.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentPort = (silent.address() as AddressInfo).port;
  const registry = configuredStorageRegistry({ s3: s3.options() });
  const silentRegistry = configuredStorageRegistry({ s3: { ...s3.options(), endpoint: `http://127.0.0.1:${silentPort}`, requestTimeoutMs: 60_000, maxAttempts: 1 } });
  const check = checkpointStorageCheck(registry, { timeoutMs: 5_000 });
  const silentCheck = checkpointStorageCheck(silentRegistry, { timeoutMs: 800 });
  // One API; the bucket named `silent-store` is served by the store that never answers.
  api = await startApi({ checkpointStorage: (prefix) => (prefix.startsWith('s3://silent-store/') ? silentCheck(prefix) : check(prefix)) });
}, 60_000);
afterAll(async () => {
  await api?.close();
  for (const socket of held) socket.destroy();
  await new Promise<void>((resolve) => (silent ? silent.close(() => resolve()) : resolve()));
  await s3?.stop();
});

async function request(seed: Awaited<ReturnType<typeof seedTenant>>, manifest: string) {
  return api.call('POST', '/v1/confirmations', {
    key: seed.requester,
    body: { action: 'train.create', booking_id: seed.bookingId, manifest, manifest_digest: manifestDigest(manifest) },
  });
}

describe('checkpoint storage is proven at the confirmation request', () => {
  it('accepts a prefix the server can write, read back and clear, and leaves no marker behind', async () => {
    const seed = await seedTenant(api);
    const r = await request(seed, storedAt('s3://ito-ckpt/code-8b/'));
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const driver = new S3StorageDriver(s3.options());
    try {
      expect(await driver.list('s3://ito-ckpt/')).toEqual([]);
    } finally {
      driver.close();
    }
  });

  it('refuses a scheme the server has no driver for, naming the schemes it has, and records nothing', async () => {
    const seed = await seedTenant(api);
    const before = await footprint(api);
    const r = await request(seed, storedAt('gs://acme-checkpoints/code-8b/'));
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('checkpoint_storage_invalid');
    expect(r.body.error.message).toContain('no storage driver for gs://');
    expect(r.body.error.message).toContain('available: file://, s3://');
    expect(r.body.error.details).toEqual({ path: '$.checkpoint.storage' });
    expect(await footprint(api)).toEqual(before);
  });

  it('refuses a bucket that does not exist as unreachable, echoing neither bucket nor prefix, and records nothing', async () => {
    const seed = await seedTenant(api);
    const before = await footprint(api);
    const r = await request(seed, storedAt('s3://no-such-bucket-here/code-8b/'));
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('checkpoint_storage_unreachable');
    expect(r.body.error.retryable).toBe(true);
    expect(JSON.stringify(r.body)).not.toContain('no-such-bucket-here');
    expect(await footprint(api)).toEqual(before);
  });

  it('gives up on a store that never answers within the probe timeout', async () => {
    const seed = await seedTenant(api);
    const before = await footprint(api);
    const started = Date.now();
    const r = await request(seed, storedAt('s3://silent-store/code-8b/'));
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('checkpoint_storage_unreachable');
    expect(r.body.error.message).toContain('did not answer within 800 ms');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await footprint(api)).toEqual(before);
  });
});
