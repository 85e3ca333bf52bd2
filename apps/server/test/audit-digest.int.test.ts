import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@ito/config';
import { createLedger, latestPublishedDigest, merkleRoot, tenantHeadsAt, verifyDigestSignature } from '@ito/ledger';
import { settled, usePool } from '../../../packages/ledger/test/harness.js';
import { loadAuditSigningKey, publishIfChanged } from '../src/workers/audit-digest.js';

const db = usePool();
const dir = mkdtempSync(join(tmpdir(), 'ito-signing-'));
const { privateKey, publicKey } = generateKeyPairSync('ed25519');

function keyFile(name: string, pem: string, mode: number): string {
  const path = join(dir, name);
  writeFileSync(path, pem);
  chmodSync(path, mode);
  return path;
}

describe('the signing key file', () => {
  it('loads an owner-only Ed25519 PEM and refuses anything else, never quoting it', async () => {
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const key = await loadAuditSigningKey(keyFile('good.pem', pem, 0o600));
    expect(key.asymmetricKeyType).toBe('ed25519');
    const refusals = [
      keyFile('loose.pem', pem, 0o644),
      keyFile('rsa.pem', generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, 0o600),
      keyFile('junk.pem', 'not a key', 0o600),
      join(dir, 'absent.pem'),
    ];
    for (const path of refusals) {
      const err = await loadAuditSigningKey(path).catch((e: unknown) => e);
      expect(err, path).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).variable).toBe('ITO_AUDIT_SIGNING_KEY_FILE');
      expect((err as Error).message).not.toContain('PRIVATE KEY');
    }
  });
});

describe('periodic digests', () => {
  it('seals and publishes a signed digest, skips when only digests were appended, publishes again after new events', async () => {
    const ledger = createLedger({ pool: db.pool() });
    for (const t of ['ten-x', 'ten-y']) await ledger.append(`s-${t}`, [{ type: 'RunReserved', data: { t } }], { tenantId: t, expectedVersion: 'no_stream' });
    await settled(db.pool());
    const first = await publishIfChanged(ledger, db.pool(), privateKey, new Date());
    expect(first.published).toBe(true);
    const signed = (await latestPublishedDigest(db.pool()))!;
    expect(verifyDigestSignature(signed, publicKey)).toBe(true);
    expect(signed.digest).toMatchObject({ seq: 2, tenant_count: 2, tenants_root: merkleRoot(await tenantHeadsAt(db.pool(), 2)) });

    await settled(db.pool());
    expect(await publishIfChanged(ledger, db.pool(), privateKey, new Date())).toEqual({ published: false, seq: 2 });
    const count = async () => Number((await db.pool().query(`select count(*) as n from events where type = 'AuditDigestPublished'`)).rows[0].n);
    expect(await count()).toBe(1);

    await ledger.append('s-ten-x', [{ type: 'RunReserved', data: { again: true } }], { tenantId: 'ten-x', expectedVersion: 1 });
    await settled(db.pool());
    const third = await publishIfChanged(ledger, db.pool(), privateKey, new Date());
    expect(third.published).toBe(true);
    expect(await count()).toBe(2);
    // The digest chain covers the first digest event too: the system stream is a tenant chain of its own.
    expect((await latestPublishedDigest(db.pool()))!.digest.tenant_count).toBe(3);
  });
});
