import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3StorageDriver, StorageError, configuredStorageRegistry, defaultStorageRegistry, probeStoragePrefix, removeUnderPrefix, s3LocationOf } from '@ito/storage';
import { startS3Server, type TestS3Server } from '../../../test/support/s3-server.js';
import { refusalOf } from '../../../test/support/refusal.js';

let s3: TestS3Server;
let driver: S3StorageDriver;
const MiB = 1024 * 1024;

beforeAll(async () => {
  s3 = await startS3Server(['ito-test', 'other-bucket']);
  driver = new S3StorageDriver(s3.options({ multipartThresholdBytes: 6 * MiB, partSizeBytes: 5 * MiB }));
});
afterAll(async () => {
  driver?.close();
  await s3?.stop();
});

const refusal = (run: () => Promise<unknown>) => refusalOf(StorageError, run);

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
/** Bytes that differ position by position, so a reordered or repeated part would change the digest. */
const pattern = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + (i >> 12)) & 0xff));

describe('s3:// storage driver against a real S3-compatible server', () => {
  it('writes, reads, lists with sizes and removes objects, each run under its own prefix', async () => {
    await driver.write('s3://ito-test/ck/run_a/pretrain/step-10', Buffer.from('ten'));
    await driver.write('s3://ito-test/ck/run_a/pretrain/step-20', Buffer.from('twenty'));
    await driver.write('s3://ito-test/ck/run_ab/pretrain/step-10', Buffer.from('other run'));
    expect((await driver.read('s3://ito-test/ck/run_a/pretrain/step-20')).toString()).toBe('twenty');
    expect(await driver.exists('s3://ito-test/ck/run_a/pretrain/step-10')).toBe(true);
    expect(await driver.exists('s3://ito-test/ck/run_a/pretrain/step-30')).toBe(false);
    // `run_a/` never reaches `run_ab/`.
    expect(await driver.listObjects('s3://ito-test/ck/run_a/')).toEqual([
      { uri: 's3://ito-test/ck/run_a/pretrain/step-10', bytes: 3 },
      { uri: 's3://ito-test/ck/run_a/pretrain/step-20', bytes: 6 },
    ]);
    expect(await driver.remove('s3://ito-test/ck/run_a/pretrain/step-10')).toBe(true);
    expect(await driver.remove('s3://ito-test/ck/run_a/pretrain/step-10')).toBe(false);
    expect(await driver.list('s3://ito-test/ck/')).toEqual(['s3://ito-test/ck/run_a/pretrain/step-20', 's3://ito-test/ck/run_ab/pretrain/step-10']);
    const err = await refusal(() => driver.read('s3://ito-test/ck/run_a/none'));
    expect([err.reason, err.code]).toEqual(['not_found', 'not_found']);
  });

  it('writes a large object as a multipart upload and streams it back with its sha256 computed as the bytes pass', async () => {
    const bytes = pattern(13 * MiB);
    await driver.write('s3://ito-test/big/whole', bytes);
    const stream = await driver.readStream('s3://ito-test/big/whole');
    let chunks = 0;
    let seen = 0;
    for await (const chunk of stream) {
      chunks++;
      seen += chunk.length;
    }
    expect(chunks).toBeGreaterThan(1);
    expect([seen, stream.bytes, stream.sha256()]).toEqual([bytes.length, bytes.length, sha256(bytes)]);

    async function* pieces() {
      for (let at = 0; at < bytes.length; at += 1 * MiB) yield bytes.subarray(at, at + 1 * MiB);
    }
    expect(await driver.writeStream('s3://ito-test/big/streamed', pieces())).toEqual({ bytes: bytes.length, sha256: sha256(bytes) });
    expect(sha256(await driver.read('s3://ito-test/big/streamed'))).toBe(sha256(bytes));
  });

  it('refuses URIs that could name more than one key, or a bucket, before any request', async () => {
    for (const bad of ['s3://ito-test/', 's3://ito-test', 's3://ito-test/a//b', 's3://ito-test/a/../b', 's3://ito-test/a%2Fb', 's3://Bad_Bucket/k', 's3://ito-test/k?x=1', `s3://ito-test/${'k'.repeat(1025)}`, 'file:///tmp/x']) {
      const err = await refusal(() => driver.write(bad, Buffer.from('x')));
      expect(err.reason, bad).toBe('invalid_uri');
      expect(err.message, bad).not.toContain(bad.slice(5));
    }
    expect(s3LocationOf('s3://ito-test/', 'prefix')).toEqual({ bucket: 'ito-test', key: '' });
    expect(await driver.list('s3://ito-test/nothing-here/')).toEqual([]);
  });

  it('stays inside the prefixes it was given, for reads, listings and removals alike', async () => {
    const confined = new S3StorageDriver(s3.options({ prefixes: ['s3://ito-test/tenant-a/'] }));
    try {
      await confined.write('s3://ito-test/tenant-a/x', Buffer.from('mine'));
      await driver.write('s3://ito-test/tenant-b/x', Buffer.from('theirs'));
      for (const run of [() => confined.read('s3://ito-test/tenant-b/x'), () => confined.list('s3://ito-test/'), () => confined.remove('s3://ito-test/tenant-b/x')]) {
        expect((await refusal(run)).reason).toBe('outside_root');
      }
      expect((await driver.read('s3://ito-test/tenant-b/x')).toString()).toBe('theirs');
    } finally {
      confined.close();
    }
  });

  it('removes everything under a prefix and counts the objects and bytes, leaving its neighbours', async () => {
    const registry = configuredStorageRegistry({ s3: s3.options() });
    await driver.write('s3://ito-test/rm/run_1/a', Buffer.from('12345'));
    await driver.write('s3://ito-test/rm/run_1/data/0/b.jsonl', Buffer.from('1234567'));
    await driver.write('s3://ito-test/rm/run_10/a', Buffer.from('keep'));
    expect(await removeUnderPrefix(registry, 's3://ito-test/rm/run_1/')).toEqual({ objects: 2, bytes: 12 });
    expect(await driver.list('s3://ito-test/rm/')).toEqual(['s3://ito-test/rm/run_10/a']);
  });

  it('reports a missing bucket and wrong credentials as stable failures that carry no key or secret', async () => {
    const err = await refusal(() => driver.write('s3://no-such-bucket/secret-key-name', Buffer.from('x')));
    expect(err.reason).toBe('io_failed');
    expect(err.message).toMatch(/^s3 storage write failed \(NoSuchBucket/);
    const listing = await refusal(() => driver.list('s3://no-such-bucket/prefix/'));
    expect([listing.reason, listing.message]).toEqual(['not_found', 'no bucket at that storage URI']);
    expect(await removeUnderPrefix(configuredStorageRegistry({ s3: s3.options() }), 's3://no-such-bucket/prefix/')).toEqual({ objects: 0, bytes: 0 });
    const wrong = new S3StorageDriver(s3.options({ credentials: { accessKeyId: 'NOT-THE-KEY-ID', secretAccessKey: 'not-the-secret-value' } }));
    try {
      const denied = await refusal(() => wrong.read('s3://ito-test/ck/run_a/pretrain/step-20'));
      expect(denied.reason).toBe('io_failed');
      expect(denied.message).not.toContain('not-the-secret-value');
      expect(denied.message).not.toContain('step-20');
      expect(denied.message).not.toContain('NOT-THE-KEY-ID');
    } finally {
      wrong.close();
    }
  });

  it('probes a prefix for real: writes a marker, reads it back, deletes it, and says when it cannot', async () => {
    const registry = configuredStorageRegistry({ s3: s3.options() });
    await probeStoragePrefix(registry, 's3://ito-test/probe/', { timeoutMs: 10_000 });
    expect(await driver.list('s3://ito-test/probe/')).toEqual([]);
    const missing = await refusal(() => probeStoragePrefix(registry, 's3://no-such-bucket/x/', { timeoutMs: 10_000 }));
    expect([missing.reason, missing.code]).toEqual(['unreachable', 'checkpoint_storage_unreachable']);
    const none = await refusal(() => probeStoragePrefix(defaultStorageRegistry(), 's3://ito-test/probe/'));
    expect([none.reason, none.code]).toEqual(['unsupported_scheme', 'checkpoint_storage_invalid']);
    expect(none.message).toContain('available: file://');
    expect(configuredStorageRegistry({ s3: s3.options() }).schemes()).toEqual(['file', 's3']);
  });

  it('fails a read with a stable error when the store dies mid-stream, and leaves no object when it dies mid-upload', async () => {
    const bytes = pattern(48 * MiB);
    await driver.write('s3://ito-test/fault/object', bytes);
    const stream = await driver.readStream('s3://ito-test/fault/object');
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);
    await s3.kill();
    const failure = await (async () => {
      try {
        while (!(await iterator.next()).done);
      } catch (err) {
        return err;
      }
      return null;
    })();
    expect(failure).toBeInstanceOf(StorageError);
    expect((failure as StorageError).reason).toBe('io_failed');
    expect((failure as StorageError).message).toMatch(/^s3 storage read failed mid-stream \(/);
    expect(stream.bytes).toBeLessThan(bytes.length);
    expect(() => stream.sha256()).toThrow('not read to its end');

    await s3.restart();
    const upload = new S3StorageDriver(s3.options({ requestTimeoutMs: 3_000 }));
    try {
      async function* dying() {
        yield bytes.subarray(0, 6 * MiB);
        await s3.kill();
        yield bytes.subarray(6 * MiB, 12 * MiB);
      }
      const err = await refusal(() => upload.writeStream('s3://ito-test/fault/half', dying()));
      expect(err.reason).toBe('io_failed');
      await s3.restart();
      expect(await upload.exists('s3://ito-test/fault/half')).toBe(false);
      expect(await upload.list('s3://ito-test/fault/')).toEqual(['s3://ito-test/fault/object']);
    } finally {
      upload.close();
    }
    // The server's own store holds no object for the key either (s3rver keeps objects as files under its directory).
    expect(JSON.stringify(await readdir(s3.directory, { recursive: true }))).not.toContain('half');
  }, 60_000);
});
