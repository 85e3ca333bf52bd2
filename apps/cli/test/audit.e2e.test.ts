import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishDigest } from '@ito/ledger';
import { settled } from '../../../packages/ledger/test/harness.js';
import { seedTenant, startApi, trainBody, trainConfirmation, type Api, type Seed } from '../../../test/support/api.js';
import { runCli } from './support/cli.js';

let api: Api;
let env: Record<string, string>;
let runId: string;
let tenantId: string;
let seed: Seed;
const dir = mkdtempSync(join(tmpdir(), 'ito-audit-'));
const pub = join(dir, 'audit.pub');
const otherPub = join(dir, 'other.pub');

beforeAll(async () => {
  api = await startApi();
  seed = await seedTenant(api);
  tenantId = seed.tenant.tenant_id;
  const ref = await trainConfirmation(api, seed);
  const r = await api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, ref), headers: { 'idempotency-key': 'audit-cli-1' } });
  runId = r.body.data.run_id;
  await seedTenant(api); // another tenant, whose events no export may hold
  const auditor = (await api.admin.createKey({ tenantId, scopes: ['audit:read'] })).key;
  await settled(api.pool);
  await api.ledger.sealPending();
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  writeFileSync(pub, publicKey.export({ type: 'spki', format: 'pem' }) as string);
  writeFileSync(otherPub, generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }) as string);
  await publishDigest(api.ledger, api.pool, privateKey, new Date());
  env = { ITO_API_URL: api.url, ITO_API_KEY: auditor, ITO_HOME: join(dir, 'home') };
});
afterAll(async () => api.close());

describe('ito audit', () => {
  it('verify recomputes the tenant chain up to the signed digest', async () => {
    const res = await runCli(['audit', 'verify', '--public-key', pub, '--json'], { env });
    expect(res.code).toBe(0);
    expect(res.json().data).toMatchObject({ tenant_id: tenantId, verified: true, anchor: 'signature_verified', head: { tenant_seq: expect.any(Number) } });
    const wrong = await runCli(['audit', 'verify', '--public-key', otherPub, '--json'], { env });
    expect([wrong.code, wrong.json().error.code]).toEqual([1, 'audit_verification_failed']);
  });

  it('export writes a file that verify checks with no server, no database and no credential', async () => {
    const out = join(dir, 'export.jsonl');
    const res = await runCli(['audit', 'export', '--out', out, '--json'], { env });
    expect(res.code).toBe(0);
    expect(res.json().data).toMatchObject({ tenant_id: tenantId, anchored: true });
    const text = readFileSync(out, 'utf8');
    expect(text.split('\n').filter(Boolean)).toHaveLength(res.json().data.records + 2);
    const again = await runCli(['audit', 'export', '--out', out, '--json'], { env });
    expect(again.code).not.toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(text);

    const offline = await runCli(['audit', 'verify', '--export', out, '--public-key', pub, '--json'], { env: {} });
    expect(offline.code).toBe(0);
    expect(offline.json()).toMatchObject({ ok: true, live_api_contacted: false, data: { verified: true, anchor: 'signature_verified' } });

    const lines = text.split('\n');
    const record = JSON.parse(lines[2]!);
    record.event.data = { ...record.event.data, injected: true };
    const tampered = join(dir, 'tampered.jsonl');
    writeFileSync(tampered, [lines[0], lines[1], JSON.stringify(record), ...lines.slice(3)].join('\n'));
    const bad = await runCli(['audit', 'verify', '--export', tampered, '--json'], { env: {} });
    expect(bad.code).toBe(1);
    expect(bad.json()).toMatchObject({ ok: false, live_api_contacted: false, error: { code: 'audit_verification_failed', details: { first_bad_position: record.position } } });
  });

  it('export to an existing file or a missing directory is a usage error that says what to do, and writes nothing', async () => {
    const existing = join(dir, 'already-there.jsonl');
    writeFileSync(existing, 'keep me');
    const taken = await runCli(['audit', 'export', '--out', existing, '--json'], { env });
    expect(taken.code).toBe(2);
    expect(taken.json()).toMatchObject({ ok: false, live_api_contacted: false, error: { code: 'validation_failed', retryable: false } });
    expect(taken.json().error.message).toMatch(/already exists.*choose a new path/);
    expect(readFileSync(existing, 'utf8')).toBe('keep me');

    const missingDir = join(dir, 'no-such-dir');
    const missing = await runCli(['audit', 'export', '--out', join(missingDir, 'export.jsonl'), '--json'], { env });
    expect(missing.code).toBe(2);
    expect(missing.json()).toMatchObject({ ok: false, live_api_contacted: false, error: { code: 'validation_failed', retryable: false } });
    expect(missing.json().error.message).toMatch(/does not exist; create it first/);
    expect(existsSync(missingDir)).toBe(false);
  });

  it('verify names the position of an event altered in the database', async () => {
    const { rows } = await api.pool.query<{ position: string; data: unknown }>(
      'select position::text as position, data from events where stream_id = $1 and stream_version = 2',
      [`run-${runId}`],
    );
    const target = Number(rows[0]!.position);
    await api.pool.query(`update events set data = data || '{"estimated_cost_usd": 1}' where position = $1`, [target]);
    try {
      const res = await runCli(['audit', 'verify', '--json'], { env });
      expect(res.code).toBe(1);
      expect(res.json().error).toMatchObject({ code: 'audit_verification_failed', details: { first_bad_position: target } });
    } finally {
      await api.pool.query('update events set data = $2::jsonb where position = $1', [target, JSON.stringify(rows[0]!.data)]);
    }
    expect((await runCli(['audit', 'verify', '--json'], { env })).code).toBe(0);
  });

  it('replay reports the live projections match, and shows a run as of a position', async () => {
    const res = await runCli(['audit', 'replay', '--json'], { env });
    expect(res.json().data).toMatchObject({ matches: true, difference_count: 0 });
    const { rows } = await api.pool.query<{ position: string }>('select min(position)::text as position from events where stream_id = $1', [`run-${runId}`]);
    const then = await runCli(['audit', 'replay', '--as-of', rows[0]!.position, '--run', runId, '--json'], { env });
    expect(then.json().data.runs).toEqual([expect.objectContaining({ run_id: runId, version: 1 })]);
    const usage = await runCli(['audit', 'replay', '--as-of', 'last tuesday', '--json'], { env });
    expect([usage.code, usage.json().live_api_contacted]).toEqual([2, false]);
  });

  it('verify --since-digest walks only what follows the signed digest: a change after it is named, one before it is left to the digest', async () => {
    const ref = await trainConfirmation(api, seed);
    const r = await api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, ref), headers: { 'idempotency-key': 'audit-cli-2' } });
    await settled(api.pool);
    await api.ledger.sealPending();
    const full = (await runCli(['audit', 'verify', '--json'], { env })).json().data;
    const since = await runCli(['audit', 'verify', '--since-digest', '--public-key', pub, '--json'], { env });
    expect(since.code).toBe(0);
    const data = since.json().data;
    expect(data).toMatchObject({ verified: true, anchor: 'signature_verified', head: full.head });
    expect(data.since.tenant_seq).toBeGreaterThan(0);
    expect(data.checked).toBe(full.checked - data.since.tenant_seq);
    const withExport = await runCli(['audit', 'verify', '--since-digest', '--export', join(dir, 'export.jsonl'), '--json'], { env });
    expect([withExport.code, withExport.json().live_api_contacted]).toEqual([2, false]);

    const positionOf = async (run: string, version: number) =>
      Number((await api.pool.query<{ position: string }>('select position::text as position from events where stream_id = $1 and stream_version = $2', [`run-${run}`, version])).rows[0]!.position);
    const alter = async (position: number, body: () => Promise<void>) => {
      const { rows } = await api.pool.query<{ data: unknown }>('select data from events where position = $1', [position]);
      await api.pool.query(`update events set data = data || '{"estimated_cost_usd": 1}' where position = $1`, [position]);
      try {
        await body();
      } finally {
        await api.pool.query('update events set data = $2::jsonb where position = $1', [position, JSON.stringify(rows[0]!.data)]);
      }
    };
    const after = await positionOf(r.body.data.run_id, 1);
    await alter(after, async () => {
      const res = await runCli(['audit', 'verify', '--since-digest', '--json'], { env });
      expect(res.code).toBe(1);
      expect(res.json().error).toMatchObject({ code: 'audit_verification_failed', details: { first_bad_position: after } });
    });
    const before = await positionOf(runId, 2);
    await alter(before, async () => {
      expect((await runCli(['audit', 'verify', '--since-digest', '--public-key', pub, '--json'], { env })).code).toBe(0);
      expect((await runCli(['audit', 'verify', '--json'], { env })).json().error).toMatchObject({ details: { first_bad_position: before } });
    });
  });
});
