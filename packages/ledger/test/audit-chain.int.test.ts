import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ExportVerifier,
  anchorFor,
  createLedger,
  exportHeaderLine,
  exportRecordLine,
  exportTrailerLine,
  merkleRoot,
  publishDigest,
  latestPublishedDigest,
  readTenantRecords,
  schemaVersionsOf,
  tenantHeadsAt,
  verifyTenantChain,
  type AuditRecord,
  type SignedDigest,
} from '../src/index.js';
import { settled, usePool } from './harness.js';

const db = usePool();
const TENANTS = ['ten-a', 'ten-b', 'ten-c'];

async function seed(n: number, prefix: string): Promise<void> {
  const ledger = createLedger({ pool: db.pool() });
  for (let i = 0; i < n; i++) {
    const tenantId = TENANTS[i % TENANTS.length]!;
    await ledger.append(`${prefix}-${i}`, [{ type: i % 2 ? 'RunReserved' : 'BookingRecorded', schemaVersion: 1 + (Math.floor(i / 6) % 2), data: { i, tenantId } }], { tenantId, expectedVersion: 'no_stream' });
  }
  await settled(db.pool());
  await ledger.sealPending({ batchSize: 7 });
}

async function records(tenantId: string): Promise<AuditRecord[]> {
  return readTenantRecords(db.pool(), tenantId, { limit: 100_000 });
}

const positionAt = async (tenantId: string, tenantSeq: number) => (await records(tenantId)).find((r) => r.tenant_seq === tenantSeq)!.position;

/** Runs `tamper`, checks the verdict, then puts the rows back as they were. */
async function withTampering(tamper: () => Promise<void>, restore: () => Promise<void>, check: () => Promise<void>): Promise<void> {
  await tamper();
  try {
    await check();
  } finally {
    await restore();
  }
}

function exportOf(tenantId: string, recs: AuditRecord[], anchor: { signed: SignedDigest; leaf: { tenant_seq: number; hash: string }; proof: { side: 'left' | 'right'; hash: string }[] } | null): string[] {
  const last = recs.at(-1);
  return [
    exportHeaderLine({ format: 'ito.audit.export/v1', tenant_id: tenantId, exported_at: new Date(0).toISOString(), anchor }),
    ...recs.map(exportRecordLine),
    exportTrailerLine({ end: true, count: recs.length, head: last ? { tenant_seq: last.tenant_seq, hash: last.hash } : null, schema_versions: schemaVersionsOf(recs) }),
  ];
}

function verifyLines(lines: string[], key: Parameters<typeof ExportVerifier.prototype.constructor>[0] = null) {
  const v = new ExportVerifier(key as never);
  for (const l of lines) if (!v.push(l)) break;
  return v.verdict();
}

describe('tenant chains', () => {
  it('chains each tenant gap free from 1 beside the global chain, and every chain verifies', async () => {
    await seed(60, 's');
    const ledger = createLedger({ pool: db.pool() });
    expect(await ledger.verify()).toMatchObject({ ok: true, checked: 60 });
    for (const t of TENANTS) {
      const recs = await records(t);
      expect(recs.map((r) => r.tenant_seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(await verifyTenantChain(db.pool(), t)).toEqual({ ok: true, checked: 20, head: { tenant_seq: 20, hash: recs[19]!.hash } });
    }
  });

  it('names the position of an altered event', async () => {
    const target = await positionAt('ten-b', 7);
    const { rows } = await db.pool().query<{ data: unknown }>('select data from events where position = $1', [target]);
    await withTampering(
      () => db.pool().query(`update events set data = jsonb_set(data, '{i}', '999') where position = $1`, [target]).then(() => undefined),
      () => db.pool().query('update events set data = $2::jsonb where position = $1', [target, JSON.stringify(rows[0]!.data)]).then(() => undefined),
      async () => {
        expect(await verifyTenantChain(db.pool(), 'ten-b')).toMatchObject({ ok: false, first_bad_position: target, checked: 6 });
        expect((await verifyTenantChain(db.pool(), 'ten-a')).ok).toBe(true);
      },
    );
    expect((await verifyTenantChain(db.pool(), 'ten-b')).ok).toBe(true);
  });

  it('names the position of a deleted event', async () => {
    const target = await positionAt('ten-c', 12);
    const { rows } = await db.pool().query('select * from events where position = $1', [target]);
    await withTampering(
      () => db.pool().query('delete from events where position = $1', [target]).then(() => undefined),
      async () => {
        const r = rows[0];
        await db.pool().query(
          `insert into events (position, stream_id, stream_version, tenant_id, type, schema_version, data, metadata, recorded_at, transaction_id, content_hash)
           overriding system value values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
          [r.position, r.stream_id, r.stream_version, r.tenant_id, r.type, r.schema_version, r.data, r.metadata, r.recorded_at, r.transaction_id, r.content_hash],
        );
      },
      async () => {
        expect(await verifyTenantChain(db.pool(), 'ten-c')).toMatchObject({ ok: false, first_bad_position: target, checked: 11, reason: expect.stringMatching(/missing/) });
        expect(await createLedger({ pool: db.pool() }).verify()).toMatchObject({ ok: false, firstBadPosition: target });
      },
    );
    expect((await verifyTenantChain(db.pool(), 'ten-c')).ok).toBe(true);
  });

  // Positions are an identity column and (stream, version) is unique, so a swap moves everything else.
  it('names the first of two swapped events', async () => {
    const first = await positionAt('ten-a', 4);
    const second = await positionAt('ten-a', 9);
    const swap = async () => {
      await db.pool().query(
        `update events e set type = o.type, schema_version = o.schema_version,
                data = o.data, metadata = o.metadata, recorded_at = o.recorded_at, content_hash = o.content_hash
         from (select * from events where position in ($1, $2)) o
         where e.position in ($1, $2) and o.position <> e.position`,
        [first, second],
      );
    };
    await withTampering(swap, swap, async () => {
      expect(await verifyTenantChain(db.pool(), 'ten-a')).toMatchObject({ ok: false, first_bad_position: first, checked: 3 });
      expect(await createLedger({ pool: db.pool() }).verify()).toMatchObject({ ok: false, firstBadPosition: first });
    });
    expect((await verifyTenantChain(db.pool(), 'ten-a')).ok).toBe(true);
  });

  it('chains links sealed before tenant chains existed, to the same hashes', async () => {
    const before = await records('ten-b');
    await db.pool().query('delete from tenant_chain');
    await createLedger({ pool: db.pool() }).sealPending({ batchSize: 9 });
    expect(await records('ten-b')).toEqual(before);
  });
});

describe('tenant exports', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const other = generateKeyPairSync('ed25519');

  async function anchored(tenantId: string) {
    const ledger = createLedger({ pool: db.pool() });
    const signed = await publishDigest(ledger, db.pool(), privateKey, new Date('2026-12-01T00:00:00Z'));
    expect(await latestPublishedDigest(db.pool())).toEqual(signed);
    const anchor = await anchorFor(db.pool(), tenantId, signed);
    return { signed, anchor: anchor ? { signed, ...anchor } : null };
  }

  it('verifies a tenant export against a signed digest over every tenant, with no database', async () => {
    const { signed, anchor } = await anchored('ten-b');
    expect(signed.digest.tenant_count).toBe(3);
    expect(signed.digest.tenants_root).toBe(merkleRoot(await tenantHeadsAt(db.pool(), signed.digest.seq)));
    // Events after the digest still belong in the export: the anchor sits inside it.
    await seed(6, 'late');
    const lines = exportOf('ten-b', await records('ten-b'), anchor);
    expect(lines.join('\n')).not.toMatch(/ten-a|ten-c/);
    const verdict = verifyLines(lines, publicKey);
    expect(verdict).toMatchObject({ ok: true, tenant_id: 'ten-b', checked: 22, anchor: 'signature_verified', schema_versions: { BookingRecorded: [1, 2], RunReserved: [1, 2] } });
    expect(verifyLines(lines)).toMatchObject({ ok: true, anchor: 'unsigned_anchor' });
    expect(verifyLines(lines, other.publicKey)).toMatchObject({ ok: false, reason: expect.stringMatching(/signature/) });
  });

  it('refuses an export whose record, anchor, trailer or end was changed', async () => {
    const { anchor } = await anchored('ten-c');
    const recs = await records('ten-c');
    const good = exportOf('ten-c', recs, anchor);
    expect(verifyLines(good, publicKey).ok).toBe(true);

    const altered = structuredClone(recs);
    (altered[4]!.event!.data as { i: number }).i += 1;
    expect(verifyLines(exportOf('ten-c', altered, anchor), publicKey)).toMatchObject({ ok: false, first_bad_position: recs[4]!.position });

    const dropped = [...recs.slice(0, 3), ...recs.slice(4)];
    expect(verifyLines(exportOf('ten-c', dropped, anchor))).toMatchObject({ ok: false, first_bad_position: recs[4]!.position, reason: expect.stringMatching(/missing/) });

    const forged = structuredClone(anchor!);
    forged.signed.digest.tenant_count += 1;
    expect(verifyLines(exportOf('ten-c', recs, forged), publicKey)).toMatchObject({ ok: false, reason: expect.stringMatching(/signature/) });

    expect(verifyLines(good.slice(0, -1))).toMatchObject({ ok: false, reason: expect.stringMatching(/cut short/) });
    expect(verifyLines(good.slice(0, -2).concat(good.at(-1)!))).toMatchObject({ ok: false, reason: expect.stringMatching(/trailer/) });
    expect(verifyLines([good[0]!, '{"tenant_seq":1,"tenant_seq":1}'])).toMatchObject({ ok: false, line: 2, reason: expect.stringMatching(/duplicate_key/) });
  });
});
