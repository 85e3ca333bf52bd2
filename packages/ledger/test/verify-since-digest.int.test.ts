import { generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLedger, publishDigest, readTenantRecords, verifyTenantChain, verifyTenantChainSince, type SignedDigest } from '../src/index.js';
import { verifyChain } from '../src/verify.js';
import { settled, usePool } from './harness.js';

/**
 * `--since-digest`: only what follows the last signed digest is walked. A tampered event after the digest is
 * named at its exact position; one before it is not looked at again (by design: the digest vouches for it), but
 * the digest's own link (global chain) or leaf and path (tenant chain) and its signature are checked.
 */
const db = usePool();
const TENANTS = ['ten-a', 'ten-b'];
const BEFORE = 20;
const AFTER = 10;
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const otherKey = generateKeyPairSync('ed25519').publicKey;

let signed: SignedDigest;
let chain: { seq: number; position: number; hash: string }[];

async function append(from: number, to: number): Promise<void> {
  const ledger = createLedger({ pool: db.pool() });
  for (let i = from; i < to; i++) {
    await ledger.append(`s-${i}`, [{ type: 'RunReserved', data: { i } }], { tenantId: TENANTS[i % 2]!, expectedVersion: 'no_stream' });
  }
  await settled(db.pool());
  await ledger.sealPending();
}

beforeAll(async () => {
  await append(0, BEFORE);
  signed = await publishDigest(createLedger({ pool: db.pool() }), db.pool(), privateKey, new Date());
  // The digest's own event is appended (and sealed) after the link it signs, with the new events.
  await append(BEFORE, BEFORE + AFTER);
  const { rows } = await db.pool().query<{ seq: string; position: string; hash: string }>('select seq::text as seq, position::text as position, hash from event_chain order by event_chain.seq');
  chain = rows.map((r) => ({ seq: Number(r.seq), position: Number(r.position), hash: r.hash }));
});

async function withEventAltered(position: number, check: () => Promise<void>): Promise<void> {
  const { rows } = await db.pool().query<{ data: unknown }>('select data from events where position = $1', [position]);
  await db.pool().query(`update events set data = jsonb_set(data, '{i}', '999') where position = $1`, [position]);
  try {
    await check();
  } finally {
    await db.pool().query('update events set data = $2::jsonb where position = $1', [position, JSON.stringify(rows[0]!.data)]);
  }
}

const since = (key = publicKey) => ({ since: { digest: signed, publicKey: key } });

describe('events slipped in without a link, since a signed digest', () => {
  it('names one after the digest and leaves one before it to the full verify', async () => {
    const txids = (await db.pool().query<{ txid: string }>('select transaction_id::text as txid from event_chain order by seq')).rows.map((r) => r.txid);
    // Transaction ids below the head's: in safe order inside the sealed range, yet nothing chains them.
    const slip = async (txid: string) =>
      Number(
        (
          await db.pool().query<{ position: string }>(
            `insert into events (stream_id, stream_version, tenant_id, type, data, metadata, recorded_at, transaction_id, content_hash)
             values ('slipped-' || $1, 1, 'ten-a', 'RunReserved', '{}', '{}', now(), $1::xid8, 'x') returning position::text`,
            [txid],
          )
        ).rows[0]!.position,
      );
    const before = await slip(txids[3]!);
    try {
      expect(await verifyChain(db.pool(), since())).toMatchObject({ ok: true, checked: AFTER + 1 });
      expect(await verifyChain(db.pool())).toMatchObject({ ok: false, checked: BEFORE + AFTER + 1, firstBadPosition: before });
      const after = await slip(txids[BEFORE + 2]!);
      try {
        expect(await verifyChain(db.pool(), since())).toEqual({
          ok: false,
          checked: AFTER + 1,
          firstBadPosition: after,
          reason: `event at position ${after} sits inside the sealed range but is not chained`,
          since: { seq: BEFORE, signature: 'verified' },
        });
      } finally {
        await db.pool().query('delete from events where position = $1', [after]);
      }
    } finally {
      await db.pool().query('delete from events where position = $1', [before]);
    }
    expect(await verifyChain(db.pool(), since())).toMatchObject({ ok: true, checked: AFTER + 1 });
  });
});

describe('the global chain since a signed digest', () => {
  it('walks only the links after the digest', async () => {
    expect(signed.digest.seq).toBe(BEFORE);
    expect(chain).toHaveLength(BEFORE + AFTER + 1);
    expect(await verifyChain(db.pool(), since())).toEqual({ ok: true, checked: AFTER + 1, headHash: chain.at(-1)!.hash, since: { seq: BEFORE, signature: 'verified' } });
    expect(await verifyChain(db.pool(), { since: { digest: signed } })).toMatchObject({ ok: true, checked: AFTER + 1, since: { signature: 'not_checked' } });
  });

  it('names a tampered event after the digest, with how many links held before it', async () => {
    const target = chain[BEFORE + 3]!; // the fourth link after the digest's
    await withEventAltered(target.position, async () => {
      expect(await verifyChain(db.pool(), { ...since(), pageSize: 2 })).toEqual({
        ok: false,
        checked: 3,
        firstBadPosition: target.position,
        reason: `event at position ${target.position} does not match its sealed hash`,
        since: { seq: BEFORE, signature: 'verified' },
      });
    });
  });

  it('does not look again at an event before the digest, which the full verify still names', async () => {
    const target = chain[4]!;
    await withEventAltered(target.position, async () => {
      expect(await verifyChain(db.pool(), since())).toMatchObject({ ok: true, checked: AFTER + 1 });
      expect(await verifyChain(db.pool())).toMatchObject({ ok: false, checked: 4, firstBadPosition: target.position });
    });
  });

  it("checks the digest's own link and its signature", async () => {
    const link = chain[BEFORE - 1]!;
    await db.pool().query('update event_chain set hash = $2 where seq = $1', [link.seq, 'f'.repeat(64)]);
    try {
      expect(await verifyChain(db.pool(), since())).toMatchObject({ ok: false, checked: 0, firstBadPosition: link.position, reason: `link ${BEFORE} is not the link the digest signs` });
    } finally {
      await db.pool().query('update event_chain set hash = $2 where seq = $1', [link.seq, link.hash]);
    }
    expect(await verifyChain(db.pool(), since(otherKey))).toMatchObject({ ok: false, checked: 0, reason: "the digest's signature does not verify with the given key" });
    const forged: SignedDigest = { ...signed, digest: { ...signed.digest, head_hash: chain[BEFORE]!.hash, seq: BEFORE + 1 } };
    expect(await verifyChain(db.pool(), { since: { digest: forged, publicKey } })).toMatchObject({ ok: false, checked: 0 });
  });

  it('walks the whole chain from a digest of the empty chain, and refuses one that names a head hash for it or a link that is not there', async () => {
    const at = (seq: number, headHash: string | null): SignedDigest => ({ ...signed, digest: { ...signed.digest, seq, head_hash: headHash } });
    const full = await verifyChain(db.pool());
    expect(full.ok).toBe(true);
    expect(await verifyChain(db.pool(), { since: { digest: at(0, null) } })).toEqual({ ...full, since: { seq: 0, signature: 'not_checked' } });
    expect(await verifyChain(db.pool(), { since: { digest: at(0, chain[0]!.hash) } })).toEqual({
      ok: false,
      checked: 0,
      firstBadPosition: 0,
      reason: 'the digest names a head hash for an empty chain',
      since: { seq: 0, signature: 'not_checked' },
    });
    const beyond = chain.length + 5;
    expect(await verifyChain(db.pool(), { since: { digest: at(beyond, 'a'.repeat(64)) } })).toEqual({
      ok: false,
      checked: 0,
      firstBadPosition: 0,
      reason: `link ${beyond}, which the digest signs, is missing`,
      since: { seq: beyond, signature: 'not_checked' },
    });
  });
});

describe("a tenant's chain since a signed digest", () => {
  it("walks only the tenant's links after its leaf under the digest", async () => {
    const recs = await readTenantRecords(db.pool(), 'ten-b', { limit: 100 });
    expect(await verifyTenantChainSince(db.pool(), 'ten-b', signed, { publicKey })).toEqual({
      ok: true,
      checked: AFTER / 2,
      head: { tenant_seq: recs.length, hash: recs.at(-1)!.hash },
      since: { seq: BEFORE, tenant_seq: BEFORE / 2, signature: 'verified' },
    });
  });

  it('names a tampered event after the leaf, and does not look again at one before it', async () => {
    const recs = await readTenantRecords(db.pool(), 'ten-a', { limit: 100 });
    const after = recs[BEFORE / 2 + 2]!; // the third link after the leaf
    await withEventAltered(after.position, async () => {
      expect(await verifyTenantChainSince(db.pool(), 'ten-a', signed, { publicKey, pageSize: 2 })).toMatchObject({
        ok: false,
        checked: 2,
        first_bad_position: after.position,
        reason: `the event at position ${after.position} does not match its sealed hash`,
      });
    });
    const before = recs[3]!;
    await withEventAltered(before.position, async () => {
      expect(await verifyTenantChainSince(db.pool(), 'ten-a', signed, { publicKey })).toMatchObject({ ok: true, checked: AFTER / 2 });
      expect(await verifyTenantChain(db.pool(), 'ten-a')).toMatchObject({ ok: false, checked: 3, first_bad_position: before.position });
    });
  });

  it("checks the leaf's path to the signed root and the signature", async () => {
    const leaf = (await readTenantRecords(db.pool(), 'ten-a', { limit: 100 }))[BEFORE / 2 - 1]!;
    await db.pool().query('update tenant_chain set hash = $3 where tenant_id = $1 and tenant_seq = $2', ['ten-a', leaf.tenant_seq, 'f'.repeat(64)]);
    try {
      expect(await verifyTenantChainSince(db.pool(), 'ten-a', signed, { publicKey })).toMatchObject({ ok: false, checked: 0, reason: "the anchor's path does not reach the published digest's root" });
    } finally {
      await db.pool().query('update tenant_chain set hash = $3 where tenant_id = $1 and tenant_seq = $2', ['ten-a', leaf.tenant_seq, leaf.hash]);
    }
    expect(await verifyTenantChainSince(db.pool(), 'ten-a', signed, { publicKey: otherKey })).toMatchObject({ ok: false, checked: 0, reason: expect.stringMatching(/signature/) });
    expect((await verifyTenantChainSince(db.pool(), 'ten-a', signed, { publicKey })).ok).toBe(true);
  });
});
