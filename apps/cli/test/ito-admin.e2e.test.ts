import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../../test/support/db.js';
import { ITO_ADMIN, runCli } from './support/cli.js';

let db: Awaited<ReturnType<typeof freshDatabase>>;
let pool: pg.Pool;
let env: Record<string, string>;
const admin = (args: string[]) => runCli(args, { entry: ITO_ADMIN, env });

beforeAll(async () => {
  db = await freshDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  env = { ITO_DATABASE_URL: db.url, ITO_HOME: '/nonexistent-ito-home', ITO_LOG_LEVEL: 'silent' };
});
afterAll(async () => {
  await pool.end();
  await db.drop();
});

describe('ito-admin on the ledger database', () => {
  it('names the principals holding keys, and refuses one principal as both requester and approver', async () => {
    const same = await admin(['tenant', 'create', '--name', 'solo', '--requester-principal', 'ops@acme', '--approver-principal', 'ops@acme', '--json']);
    expect(same.code).toBe(1);
    expect(same.json()).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
    const t = (await admin(['tenant', 'create', '--name', 'acme', '--requester-principal', 'ml@acme', '--approver-principal', 'finance@acme', '--json'])).json();
    expect(t.data).toMatchObject({ requester_principal: 'ml@acme', approver_principal: 'finance@acme' });
    const key = (await admin(['key', 'create', '--tenant', t.data.tenant_id, '--scopes', 'confirmations:approve', '--principal', 'ml@acme', '--json'])).json();
    expect(key.data).toMatchObject({ principal: 'ml@acme' });
    const { rows } = await pool.query('select principal from api_keys where tenant_id = $1 order by created_at', [t.data.tenant_id]);
    expect(rows.map((r) => r.principal).sort()).toEqual(['finance@acme', 'ml@acme', 'ml@acme']);
  });

  it("makes an operator credential only through operator-key create, never as a tenant's key", async () => {
    const t = (await admin(['tenant', 'create', '--name', 'buyer', '--requester-principal', 'ml@buyer', '--approver-principal', 'finance@buyer', '--json'])).json();
    const keys = async () => (await pool.query<{ n: number }>('select count(*)::int as n from api_keys')).rows[0]!.n;
    const before = await keys();
    const refused = await admin(['key', 'create', '--tenant', t.data.tenant_id, '--scopes', 'admin,desk:fleet', '--principal', 'owner@buyer', '--json']);
    expect([refused.code, refused.json().error.code]).toEqual([1, 'validation_failed']);
    expect(refused.json().error.message).toMatch(/operator-key create/);
    expect(await keys()).toBe(before);
    const op = await admin(['operator-key', 'create', '--principal', 'pricing-desk@ito', '--json']);
    expect(op.code).toBe(0);
    expect(op.json().data).toMatchObject({ scopes: ['desk:read', 'desk:fleet'], principal: 'pricing-desk@ito', key: expect.stringMatching(/^ito_sk_/) });
    const row = await pool.query('select tenant_id, scopes from api_keys where key_id = $1', [op.json().data.key_id]);
    expect(row.rows[0].tenant_id).not.toBe(t.data.tenant_id);
    // A second operator key joins the same operator account.
    const again = (await admin(['operator-key', 'create', '--principal', 'cfo@ito', '--json'])).json();
    expect((await pool.query('select tenant_id from api_keys where key_id = $1', [again.data.key_id])).rows[0].tenant_id).toBe(row.rows[0].tenant_id);
  });

  it('bootstraps a tenant, a key, a booking and a node through the API service, secrets shown once', async () => {
    const unnamed = await admin(['tenant', 'create', '--name', 'acme', '--json']);
    expect([unnamed.code, unnamed.json().error.code]).toEqual([2, 'validation_failed']);
    const tenant = await admin(['tenant', 'create', '--name', 'acme', '--requester-principal', 'ml@acme', '--approver-principal', 'finance@acme', '--json']);
    expect(tenant.code).toBe(0);
    const t = tenant.json();
    expect(t).toMatchObject({ ok: true, live_api_contacted: false });
    expect(t.data.tenant_id).toMatch(/\S/);
    expect(t.data.requester_key).toMatch(/\S/);
    expect(t.data.approver_key).toMatch(/\S/);
    // Stored as the SHA-256 of the secret: a present hash of each key, never the key, never null.
    const stored = await pool.query<{ secret_hash: string | null }>('select secret_hash from api_keys where tenant_id = $1 order by secret_hash', [t.data.tenant_id]);
    const sha256 = (v: string) => createHash('sha256').update(v).digest('hex');
    expect(stored.rows.map((r) => r.secret_hash)).toEqual([sha256(t.data.requester_key), sha256(t.data.approver_key)].sort());

    const key = (await admin(['key', 'create', '--tenant', t.data.tenant_id, '--scopes', 'audit:read,desk:read', '--json'])).json();
    expect(key).toMatchObject({ ok: true, data: { key_id: expect.any(String), key: expect.any(String) } });

    const start = new Date(Date.now() - 3600_000).toISOString();
    const end = new Date(Date.now() + 30 * 86400_000).toISOString();
    const booking = await admin([
      'booking', 'create', '--tenant', t.data.tenant_id, '--gpu', 'h200', '--nodes', '2', '--gpus-per-node', '8', '--region', 'us-east-1',
      '--fabric', 'infiniband', '--term-start', start, '--term-end', end, '--rate-usd-per-gpu-hour', '2.5', '--json',
    ]);
    expect(booking.code).toBe(0);
    const b = booking.json();
    expect(b.data).toMatchObject({ booking_id: expect.any(String), status: 'completed' });

    const node = (await admin(['node', 'register', '--booking', b.data.booking_id, '--name', 'gpu-01', '--json'])).json();
    expect(node).toMatchObject({ ok: true, data: { node_id: expect.any(String), node_credential: expect.any(String) } });

    const expired = (await admin(['booking', 'expire', b.data.booking_id, '--json'])).json();
    expect(expired).toMatchObject({ ok: true, data: { booking_id: b.data.booking_id, status: 'expired' } });

    const revoked = await admin(['--json', 'key', 'revoke', key.data.key_id]);
    expect(revoked.code).toBe(0);
    const row = await pool.query('select revoked_at from api_keys where key_id = $1', [key.data.key_id]);
    expect(row.rows[0].revoked_at).not.toBeNull();

    const events = await pool.query<{ type: string; data: unknown; metadata: unknown }>('select type, data, metadata from events order by position');
    expect(events.rows.map((e) => e.type)).toEqual(expect.arrayContaining(['TenantCreated', 'ApiKeyCreated', 'BookingRecorded', 'NodeRegistered', 'BookingStatusChanged', 'ApiKeyRevoked']));

    // Shown once: each secret is in the answer that created it and nowhere after it, nor in any event or row.
    const shown: Array<[string, string[]]> = [
      [t.data.requester_key, [key, b, node, expired, revoked.json()].map((o) => JSON.stringify(o))],
      [t.data.approver_key, [key, b, node, expired, revoked.json()].map((o) => JSON.stringify(o))],
      [key.data.key, [b, node, expired, revoked.json()].map((o) => JSON.stringify(o))],
      [node.data.node_credential, [expired, revoked.json()].map((o) => JSON.stringify(o))],
    ];
    const everyRow = JSON.stringify((await pool.query('select * from events')).rows) + JSON.stringify((await pool.query('select * from api_keys')).rows);
    for (const [secret, later] of shown) {
      expect(secret).toMatch(/^ito_(sk|nc)_[A-Za-z0-9_-]{43}$/);
      expect(later.filter((out) => out.includes(secret))).toEqual([]);
      expect(everyRow).not.toContain(secret);
    }
    expect(JSON.stringify(t)).toContain(t.data.requester_key);
  });

  it('answers not_found (exit 1) for an unknown booking', async () => {
    const res = await admin(['booking', 'revoke', 'bkg_missing', '--json']);
    expect(res.code).toBe(1);
    expect(res.json().error.code).toBe('not_found');
  });

  it('is a usage error (exit 2) without a required flag, and touches no database', async () => {
    const res = await runCli(['tenant', 'create', '--json'], { entry: ITO_ADMIN, env: { ITO_DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none' } });
    expect(res.code).toBe(2);
  });

  it('reports connect_failed (exit 4) when the database cannot be reached, without printing the URL password', async () => {
    const res = await runCli(['tenant', 'create', '--name', 'x', '--requester-principal', 'ml@x', '--approver-principal', 'finance@x', '--json'], {
      entry: ITO_ADMIN,
      env: { ITO_DATABASE_URL: 'postgres://u:pw-secret-123@127.0.0.1:9/none' },
    });
    expect(res.code).toBe(4);
    expect(res.json()).toMatchObject({ ok: false, live_api_contacted: false, error: { code: 'connect_failed' } });
    expect(res.stdout + res.stderr).not.toContain('pw-secret-123');
  });
});

describe('ito-admin tenant policy', () => {
  it('shows and sets a tenant`s file roots and storage, validated, and records TenantPolicyChanged', async () => {
    const t = (await admin(['tenant', 'create', '--name', 'roots', '--requester-principal', 'ml@roots', '--approver-principal', 'finance@roots', '--json'])).json();
    const tenant = t.data.tenant_id as string;
    // Over ITO_DATABASE_URL (not the embedded install) a tenant gets no file root.
    expect(t.data.file_roots).toEqual([]);
    const shown = (await admin(['tenant', 'policy', 'show', '--tenant', tenant, '--json'])).json();
    expect(shown).toMatchObject({ ok: true, live_api_contacted: false, data: { tenant_id: tenant, policy: { file_roots: [], checkpoint_storage: { schemes: ['s3', 'gs', 'az'] } } } });

    const set = await admin(['tenant', 'policy', 'set', '--tenant', tenant, '--file-roots', '/srv/ito/roots,/data/shared', '--storage-schemes', 's3,file', '--max-contaminated-fraction', '0.01', '--json']);
    expect(set.code).toBe(0);
    expect(set.json().data.policy).toMatchObject({ file_roots: ['/srv/ito/roots', '/data/shared'], checkpoint_storage: { schemes: ['s3', 'file'], prefixes: [] }, max_contaminated_fraction: 0.01 });
    const after = (await admin(['tenant', 'policy', 'show', '--tenant', tenant, '--json'])).json();
    expect(after.data.policy).toEqual(set.json().data.policy);
    const human = await admin(['tenant', 'policy', 'show', '--tenant', tenant]);
    expect(human.stdout).toMatch(/file_roots\s+\/srv\/ito\/roots, \/data\/shared/);

    const events = await pool.query<{ data: { policy: { file_roots: string[] } } }>(`select data from events where type = 'TenantPolicyChanged' and stream_id = $1`, [`tenant-${tenant}`]);
    expect(events.rows.map((r) => r.data.policy.file_roots)).toEqual([['/srv/ito/roots', '/data/shared']]);

    // Refused, and nothing changed: relative, `..`, trailing slash, percent escapes; show takes no set flags.
    for (const bad of ['srv/ito', '/srv/../etc', '/srv/ito/', '/srv/%2e%2e']) {
      const r = await admin(['tenant', 'policy', 'set', '--tenant', tenant, '--file-roots', bad, '--json']);
      expect(r.code, bad).toBe(1);
      expect(r.json()).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
    }
    expect((await admin(['tenant', 'policy', 'show', '--tenant', tenant, '--file-roots', '/x', '--json'])).json()).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
    expect((await admin(['tenant', 'policy', 'set', '--tenant', tenant, '--json'])).json()).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
    const unchanged = await pool.query(`select count(*)::int as n from events where type = 'TenantPolicyChanged' and stream_id = $1`, [`tenant-${tenant}`]);
    expect(unchanged.rows[0].n).toBe(1);
    // An empty list takes every root back.
    expect((await admin(['tenant', 'policy', 'set', '--tenant', tenant, '--file-roots', '', '--json'])).json().data.policy.file_roots).toEqual([]);
  }, 180_000); // a dozen ito-admin processes, each starting node
});
