import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ExportVerifier,
  exportHeaderLine,
  exportRecordLine,
  exportTrailerLine,
  publishDigest,
  schemaVersionsOf,
  verifyTenantRecords,
  type AuditRecord,
} from '@ito/ledger';
import { AUDIT_EVENTS_PAGE_MAX } from '@ito/contracts';
import { settled } from '../../../packages/ledger/test/harness.js';
import { seedTenant, startApi, trainBody, trainConfirmation, type Api, type Seed } from '../../../test/support/api.js';

let api: Api;
let a: Seed & { auditor: string; runId: string };
let b: Seed & { auditor: string; runId: string };
const { privateKey, publicKey } = generateKeyPairSync('ed25519');

async function tenantWithRun(name: string) {
  const seed = await seedTenant(api);
  const ref = await trainConfirmation(api, seed);
  const r = await api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, ref), headers: { 'idempotency-key': `audit-${name}` } });
  if (r.status !== 201) throw new Error(`train failed: ${JSON.stringify(r.body)}`);
  const auditor = (await api.admin.createKey({ tenantId: seed.tenant.tenant_id, scopes: ['audit:read'] })).key;
  return { ...seed, auditor, runId: r.body.data.run_id as string };
}

async function allRecords(key: string): Promise<AuditRecord[]> {
  const out: AuditRecord[] = [];
  let after = 0;
  for (;;) {
    const r = await api.call('GET', `/v1/audit/events?after=${after}&limit=3`, { key });
    expect(r.status).toBe(200);
    out.push(...r.body.data.records);
    if (r.body.data.next_after === null) return out;
    after = r.body.data.next_after;
  }
}

const scratchSchemas = async () =>
  Number((await api.pool.query<{ n: string }>(`select count(*) as n from information_schema.schemata where schema_name like 'ito_replay_%'`)).rows[0]!.n);

beforeAll(async () => {
  api = await startApi();
  a = await tenantWithRun('a');
  b = await tenantWithRun('b');
  await settled(api.pool);
  await api.ledger.sealPending();
});
afterAll(async () => api.close());

describe('audit routes', () => {
  it('serve a tenant its own chain only, which verifies, paged', async () => {
    const records = await allRecords(a.auditor);
    expect(records.length).toBeGreaterThan(3);
    expect(records.map((r) => r.tenant_seq)).toEqual(records.map((_, i) => i + 1));
    expect(verifyTenantRecords(a.tenant.tenant_id, records)).toMatchObject({ ok: true, checked: records.length });
    const text = JSON.stringify(records);
    for (const other of [b.tenant.tenant_id, b.bookingId, b.runId]) expect(text).not.toContain(other);
  });

  it('refuse a credential without audit:read, and query keys it does not know', async () => {
    for (const path of ['/v1/audit/events', '/v1/audit/digest', '/v1/audit/replay']) {
      const r = await api.call('GET', path, { key: a.requester });
      expect([r.status, r.body.error.code]).toEqual([403, 'forbidden']);
    }
    const r = await api.call('GET', '/v1/audit/events?tenant_id=x', { key: a.auditor });
    expect([r.status, r.body.error.code]).toEqual([400, 'validation_failed']);
  });

  it('serve a page of up to AUDIT_EVENTS_PAGE_MAX links, the page the CLI asks for, and refuse a larger one', async () => {
    const whole = await api.call('GET', `/v1/audit/events?limit=${AUDIT_EVENTS_PAGE_MAX}`, { key: a.auditor });
    expect(whole.status).toBe(200);
    expect(whole.body.data.records).toEqual(await allRecords(a.auditor));
    for (const limit of [0, AUDIT_EVENTS_PAGE_MAX + 1]) {
      const r = await api.call('GET', `/v1/audit/events?limit=${limit}`, { key: a.auditor });
      expect([r.status, r.body.error.code]).toEqual([400, 'validation_failed']);
    }
  });

  it('anchor an export to a signed digest over every tenant, which verifies offline', async () => {
    const before = await api.call('GET', '/v1/audit/digest', { key: b.auditor });
    expect(before.body.data).toMatchObject({ published: null, anchor: null });
    await publishDigest(api.ledger, api.pool, privateKey, new Date());
    const d = (await api.call('GET', '/v1/audit/digest', { key: b.auditor })).body.data;
    expect(d.published.digest.tenant_count).toBeGreaterThanOrEqual(2);
    const records = await allRecords(b.auditor);
    expect(d.head).toEqual({ tenant_seq: records.at(-1)!.tenant_seq, hash: records.at(-1)!.hash });
    const lines = [
      exportHeaderLine({ format: 'ito.audit.export/v1', tenant_id: b.tenant.tenant_id, exported_at: new Date().toISOString(), anchor: { signed: d.published, ...d.anchor } }),
      ...records.map(exportRecordLine),
      exportTrailerLine({ end: true, count: records.length, head: d.head, schema_versions: schemaVersionsOf(records) }),
    ];
    const v = new ExportVerifier(publicKey);
    for (const l of lines) v.push(l);
    expect(v.verdict()).toMatchObject({ ok: true, anchor: 'signature_verified', checked: records.length });
  });
});

describe('audit replay', () => {
  it('rebuilds every projection and finds the live ones match, leaving nothing behind', async () => {
    const events = Number((await api.pool.query('select count(*) as n from events')).rows[0].n);
    const r = await api.call('GET', '/v1/audit/replay', { key: a.auditor });
    expect(r.body.data).toMatchObject({ matches: true, difference_count: 0, projections: ['runs', 'tasks', 'bookings', 'slo'] });
    expect(r.body.data.applied).toBeGreaterThan(0);
    expect(await scratchSchemas()).toBe(0);
    expect(Number((await api.pool.query('select count(*) as n from events')).rows[0].n)).toBe(events);
  });

  it('reports a live row changed behind the ledger by run and field, for its tenant only', async () => {
    const { rows } = await api.pool.query<{ state: string }>('select state from runs where run_id = $1', [a.runId]);
    await api.pool.query(`update runs set state = 'succeeded' where run_id = $1`, [a.runId]);
    await api.pool.query(`update bookings set region = 'eu-west-9' where booking_id = $1`, [a.bookingId]);
    try {
      const r = await api.call('GET', '/v1/audit/replay', { key: a.auditor });
      expect(r.body.data.matches).toBe(false);
      expect(r.body.data.differences).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ table: 'runs', run_id: a.runId, field: 'state', live: 'succeeded', replayed: rows[0]!.state }),
          expect.objectContaining({ table: 'bookings', key: { booking_id: a.bookingId }, field: 'region', live: 'eu-west-9' }),
        ]),
      );
      expect((await api.call('GET', '/v1/audit/replay', { key: b.auditor })).body.data.matches).toBe(true);
    } finally {
      await api.pool.query('update runs set state = $2 where run_id = $1', [a.runId, rows[0]!.state]);
      await api.pool.query(`update bookings set region = 'us-east-1' where booking_id = $1`, [a.bookingId]);
    }
    expect((await api.call('GET', '/v1/audit/replay', { key: a.auditor })).body.data.matches).toBe(true);
  });

  it('shows a run as it stood at a position or a time', async () => {
    const { rows } = await api.pool.query<{ position: string }>('select position::text as position from events where stream_id = $1 order by stream_version', [`run-${a.runId}`]);
    const first = Number(rows[0]!.position);
    const then = (await api.call('GET', `/v1/audit/replay?as_of=${first}&run_id=${a.runId}`, { key: a.auditor })).body.data;
    expect(then).toMatchObject({ as_of: { position: first }, runs: [expect.objectContaining({ run_id: a.runId, version: 1 })] });
    const live = (await api.call('GET', `/v1/runs/${a.runId}`, { key: a.requester })).body.data;
    const now = (await api.call('GET', `/v1/audit/replay?as_of=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`, { key: a.auditor })).body.data;
    expect(now.runs).toEqual([expect.objectContaining({ run_id: a.runId, state: live.state })]);
    const before = (await api.call('GET', '/v1/audit/replay?as_of=2000-01-01T00:00:00Z', { key: a.auditor })).body.data;
    expect(before.runs).toEqual([]);
    const bad = await api.call('GET', '/v1/audit/replay?as_of=yesterday', { key: a.auditor });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'validation_failed']);
    const other = await api.call('GET', `/v1/audit/replay?as_of=${first}&run_id=${b.runId}`, { key: a.auditor });
    expect(other.body.error.code).toBe('not_found');
    expect(await scratchSchemas()).toBe(0);
  });
});
