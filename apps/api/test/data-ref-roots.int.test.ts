import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestDigest } from '@ito/contracts';
import { EXAMPLE_MANIFEST, footprint, seedTenant, startApi, type Api, type Seed } from '../../../test/support/api.js';

/**
 * Issue 24 §1: a tenant's `file://` refs are confined to the roots the operator granted it, and a ref outside
 * them is refused at the confirmation request, before anything is opened, with an answer that says nothing of
 * what is at the path. Two directories stand in for the host: `grant` (the tenant's root) and `outside`
 * (another tenant's files, or `$ITO_HOME`).
 */
let api: Api;
let base: string;
let grant: string;
let outside: string;
const SECRET = 'another tenant\'s bytes\n';
const secretSha = createHash('sha256').update(SECRET).digest('hex');

beforeAll(async () => {
  api = await startApi();
  base = mkdtempSync(join(tmpdir(), 'ito-roots-'));
  grant = join(base, 'grant');
  outside = join(base, 'home');
  mkdirSync(join(grant, 'data'), { recursive: true });
  mkdirSync(join(outside, 'pg'), { recursive: true });
  writeFileSync(join(outside, 'pg', 'secret.jsonl'), SECRET);
  // A symlinked directory higher up: inside the grant by its string, elsewhere on the disk.
  symlinkSync(outside, join(grant, 'data', 'link'));
  // A FIFO outside the grant: anything that opened it for reading would wait for a writer forever.
  execFileSync('mkfifo', [join(outside, 'fifo.jsonl')]);
});
afterAll(async () => {
  await api?.close();
  rmSync(base, { recursive: true, force: true });
});

function manifestWith(change: (m: any) => void): string {
  const m = JSON.parse(EXAMPLE_MANIFEST);
  m.checkpoint.storage = `file://${grant}/ckpt/`;
  change(m);
  return JSON.stringify(m, null, 2);
}

const withDataRef = (ref: string) => manifestWith((m) => (m.data[0].ref = ref));

async function grantRoots(seed: Seed, roots: string[]) {
  await api.admin.setTenantPolicy({ tenantId: seed.tenant.tenant_id, policy: { file_roots: roots, checkpoint_storage: { schemes: ['s3', 'file'], prefixes: [] } } });
}

function requestConfirmation(seed: Seed, manifest: string) {
  return api.call('POST', '/v1/confirmations', {
    key: seed.requester,
    body: { action: 'train.create', booking_id: seed.bookingId, manifest, manifest_digest: manifestDigest(manifest) },
  });
}

/** A refused confirmation request: the code, nothing recorded, and an answer that names nothing of the file. */
async function refused(seed: Seed, manifest: string, code: string, path: string) {
  const before = await footprint(api);
  const r = await requestConfirmation(seed, manifest);
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(r.body.error.code).toBe(code);
  expect(r.body.error.details).toMatchObject({ path });
  const answer = JSON.stringify(r.body);
  expect(answer).not.toContain(secretSha);
  expect(answer).not.toMatch(/[0-9a-f]{64}/);
  expect(answer).not.toMatch(/exist|director|symlink to|bytes|size|no such/i);
  expect(answer).not.toContain(outside);
  expect(await footprint(api)).toEqual(before);
  return r;
}

describe('file:// refs at the confirmation request', () => {
  it('refuses every attacker try outside the granted roots with data_ref_not_permitted, opening nothing', async () => {
    const seed = await seedTenant(api);
    await grantRoots(seed, [grant]);
    const tries = [
      'file:///etc/shadow',
      'file:///proc/self/environ',
      `file://${outside}/pg/secret.jsonl`, // a path under another $ITO_HOME
      `file://${outside}/fifo.jsonl`, // opened, it would hang this request
      `file://${outside}/pg/`, // a directory
      `file://${outside}/pg/missing.jsonl`, // nothing there: the same answer
      `file://${grant}/../home/pg/secret.jsonl`,
      `file://${grant}/data/%2e%2e/%2e%2e/home/pg/secret.jsonl`,
      'file:///etc/%73hadow',
      `file://${grant}/data%2f..%2f..%2fhome/pg/secret.jsonl`,
      'file://localhost/etc/shadow',
    ];
    const messages = new Set<string>();
    for (const ref of tries) {
      const r = await refused(seed, withDataRef(ref), 'data_ref_not_permitted', '$.data[0].ref');
      messages.add(r.body.error.message);
    }
    // Outside the grants, a file, a directory, a FIFO and nothing at all get one answer (malformed paths another).
    expect([...messages].sort()).toEqual([
      '$.data[0].ref is not a normalised file:///absolute/path (no host, no . or .., no percent escapes, no NUL)',
      '$.data[0].ref is not inside a file root granted to this account',
    ]);
  });

  it('refuses a symlinked directory higher up inside the grant, the report, the recipe`s data_ref and a DPO reference_policy', async () => {
    const seed = await seedTenant(api);
    await grantRoots(seed, [grant]);
    await refused(seed, withDataRef(`file://${grant}/data/link/pg/secret.jsonl`), 'data_ref_not_permitted', '$.data[0].ref');
    await refused(
      seed,
      manifestWith((m) => (m.data[0].decontamination.report_ref = `file://${outside}/pg/secret.jsonl`)),
      'data_ref_not_permitted',
      '$.data[0].decontamination.report_ref',
    );
    await refused(seed, manifestWith((m) => (m.post_training.recipe[0].data_ref = 'file:///etc/shadow')), 'data_ref_not_permitted', '$.post_training.recipe[0].data_ref');
    await refused(
      seed,
      manifestWith((m) => (m.post_training.recipe[1].reference_policy = `file://${outside}/pg/secret.jsonl`)),
      'data_ref_not_permitted',
      '$.post_training.recipe[1].reference_policy',
    );
    await refused(seed, manifestWith((m) => (m.checkpoint.storage = `file://${outside}/ckpt/`)), 'checkpoint_storage_invalid', '$.checkpoint.storage');
    await refused(seed, manifestWith((m) => (m.checkpoint.storage = `file://${grant}/data/link/ckpt/`)), 'checkpoint_storage_invalid', '$.checkpoint.storage');
  });

  it('grants nothing by default, and a refused ref is accepted once the operator grants its root', async () => {
    const seed = await seedTenant(api);
    await api.admin.setTenantPolicy({ tenantId: seed.tenant.tenant_id, policy: { checkpoint_storage: { schemes: ['s3', 'file'], prefixes: [] } } });
    expect((await api.admin.showTenantPolicy({ tenantId: seed.tenant.tenant_id })).policy.file_roots).toEqual([]);
    const manifest = manifestWith((m) => {
      m.checkpoint.storage = `file://${outside}/ckpt/`;
      m.data[0].ref = `file://${outside}/pg/secret.jsonl`;
    });
    await refused(seed, manifest, 'data_ref_not_permitted', '$.data[0].ref');
    await grantRoots(seed, [grant, outside]);
    const r = await requestConfirmation(seed, manifest);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  });

  it('the operator`s roots are validated: absolute and normalised only', async () => {
    const seed = await seedTenant(api);
    for (const root of ['relative/dir', '/srv/../etc', '/srv/ito/', '/srv//ito', '/srv/%2e%2e', '/srv/\u0000x', '', 'file:///srv']) {
      await expect(api.admin.setTenantPolicy({ tenantId: seed.tenant.tenant_id, policy: { file_roots: [root] } }), root).rejects.toMatchObject({ code: 'validation_failed' });
    }
    expect((await api.admin.showTenantPolicy({ tenantId: seed.tenant.tenant_id })).policy.file_roots).toEqual([]);
  });

  it('the embedded install grants each tenant its own root under $ITO_HOME/files, and file:// storage there', async () => {
    const home = join(base, 'ito-home', 'files');
    const a = await api.admin.createTenant({ name: 'local-a', requesterPrincipal: 'ml@a', approverPrincipal: 'finance@a', localFileRootBase: home });
    const b = await api.admin.createTenant({ name: 'local-b', requesterPrincipal: 'ml@b', approverPrincipal: 'finance@b', localFileRootBase: home });
    expect(a.file_roots).toEqual([`${home}/${a.tenant_id}`]);
    expect(b.file_roots).toEqual([`${home}/${b.tenant_id}`]);
    const policy = (await api.admin.showTenantPolicy({ tenantId: a.tenant_id })).policy;
    expect(policy.checkpoint_storage.schemes).toContain('file');
    await expect(api.admin.createTenant({ name: 'bad', requesterPrincipal: 'ml@bad', approverPrincipal: 'finance@bad', localFileRootBase: 'relative' })).rejects.toMatchObject({ code: 'validation_failed' });
  });
});
