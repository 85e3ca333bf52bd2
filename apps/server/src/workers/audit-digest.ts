import type { KeyObject } from 'node:crypto';
import { open } from 'node:fs/promises';
import { z } from 'zod';
import { ConfigError } from '@ito/config';
import { AUDIT_DIGEST_STREAM, latestPublishedDigest, loadSigningKey, publishDigest, type Ledger } from '@ito/ledger';
import { defineJobs, type JobHandlers } from '@ito/queue';
import type pg from 'pg';
import type { WorkerRegistration, WorkerResources } from './registry.js';

const VARIABLE = 'ITO_AUDIT_SIGNING_KEY_FILE';
/** A PEM Ed25519 private key is about 120 bytes; a file much larger is not one. */
const MAX_KEY_BYTES = 16 * 1024;

export const auditDigestJobs = defineJobs({
  'audit.digest': {
    schema: z.object({}).strict(),
    timeoutMs: 120_000,
    jobId: () => 'audit-digest',
    attempts: 1,
  },
});

/**
 * Reads the signing key once at start. The file must be a regular file only its owner can read or write:
 * a signing key others can read signs for anyone. Errors name the variable and the rule, never the content.
 */
export async function loadAuditSigningKey(path: string): Promise<KeyObject> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch {
    throw new ConfigError(VARIABLE, 'the file cannot be opened');
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new ConfigError(VARIABLE, 'not a regular file');
    if ((st.mode & 0o077) !== 0) throw new ConfigError(VARIABLE, 'the key file must not be readable or writable by group or others (chmod 600)');
    if (st.size > MAX_KEY_BYTES) throw new ConfigError(VARIABLE, 'the file is too large to be a key');
    const pem = await handle.readFile('utf8');
    try {
      return loadSigningKey(pem);
    } catch {
      throw new ConfigError(VARIABLE, 'not an Ed25519 private key in PEM (PKCS#8)');
    }
  } finally {
    await handle.close();
  }
}

/**
 * Seals what is committed, then publishes a signed digest of it, unless nothing but earlier digests was
 * appended since the last one (so an idle ledger does not grow by a digest every interval).
 */
export async function publishIfChanged(ledger: Ledger, pool: pg.Pool, key: KeyObject, now: Date): Promise<{ published: boolean; seq: number | null }> {
  while ((await ledger.sealPending()) > 0) {
    // Catching up: a burst is sealed before the digest is taken.
  }
  const last = await latestPublishedDigest(pool);
  if (last) {
    const { rows } = await pool.query<{ changed: boolean }>(
      `select exists (select 1 from tenant_chain t join events e on e.position = t.position where t.seq > $1 and e.stream_id <> $2) as changed`,
      [last.digest.seq, AUDIT_DIGEST_STREAM],
    );
    if (!rows[0]?.changed) return { published: false, seq: last.digest.seq };
  }
  const signed = await publishDigest(ledger, pool, key, now);
  return { published: true, seq: signed.digest.seq };
}

export function auditDigestHandlers(ledger: Ledger, pool: pg.Pool, key: KeyObject): JobHandlers<typeof auditDigestJobs> {
  return { 'audit.digest': async () => publishIfChanged(ledger, pool, key, new Date()) };
}

/** The worker group that publishes digests, present only when the operator configured a signing key. */
export function auditDigestRegistration(key: KeyObject, everyMs: number): WorkerRegistration {
  return {
    name: 'audit-digest',
    catalog: auditDigestJobs,
    handlers: ({ ledger, pipeline }: WorkerResources) => auditDigestHandlers(ledger, pipeline.pool, key),
    schedules: [{ job: 'audit.digest', everyMs, data: {} }],
  } as unknown as WorkerRegistration;
}
