import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3StorageOptions } from '@ito/storage';

const CHILD = new URL('./s3-server-child.mjs', import.meta.url).pathname;

/** The fixed credentials s3rver accepts; they open nothing but the test's own loopback server. */
export const S3_TEST_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface TestS3Server {
  endpoint: string;
  port: number;
  /** Where the server keeps its objects, kept across a restart. */
  directory: string;
  /** Driver options that reach this server (path-style, its credentials, short timeouts for tests). */
  options(extra?: Partial<S3StorageOptions>): S3StorageOptions;
  /** SIGKILL, as a store that dies mid-request; resolves once the process is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory (after kill or stop). */
  restart(): Promise<void>;
  /** Stops it and removes its directory. */
  stop(): Promise<void>;
}

/** Starts s3rver on 127.0.0.1 (a free port) with the given buckets, in its own process. */
export async function startS3Server(buckets: string[] = ['ito-test']): Promise<TestS3Server> {
  const directory = await mkdtemp(join(tmpdir(), 'ito-s3-'));
  let child: ChildProcess;
  let port = 0;
  const launch = async () => {
    const started = await launchChild(directory, port, buckets);
    child = started.child;
    port = started.port;
  };
  await launch();
  const gone = () => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
  const server: TestS3Server = {
    get endpoint() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    directory,
    options: (extra = {}) => ({
      endpoint: `http://127.0.0.1:${port}`,
      forcePathStyle: true,
      region: 'us-east-1',
      credentials: S3_TEST_CREDENTIALS,
      connectTimeoutMs: 2_000,
      requestTimeoutMs: 10_000,
      maxAttempts: 2,
      ...extra,
    }),
    async kill() {
      child.kill('SIGKILL');
      await gone();
    },
    restart: launch,
    async stop() {
      child.kill('SIGTERM');
      await gone();
      await rm(directory, { recursive: true, force: true });
    },
  };
  return server;
}

function launchChild(directory: string, port: number, buckets: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [CHILD, directory, String(port), ...buckets], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`s3rver did not start within 20 s: ${err}`));
    }, 20_000);
    child.stderr!.on('data', (c: Buffer) => (err += c));
    child.stdout!.on('data', (c: Buffer) => {
      out += c;
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) {
        clearTimeout(timer);
        resolve({ child, port: (JSON.parse(line) as { port: number }).port });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`s3rver exited (${code}) before listening: ${err}`));
    });
  });
}
