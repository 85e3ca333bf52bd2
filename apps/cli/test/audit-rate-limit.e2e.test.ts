import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled } from '../../../packages/ledger/test/harness.js';
import { seedTenant, startApi, type Api } from '../../../test/support/api.js';
import { runCli } from './support/cli.js';

// A tenant's chain is read in pages; a long one takes more requests than a credential's budget allows in one
// window. The CLI waits out the server's Retry-After and goes on, instead of failing (or leaving no export) part way.
// Here the budget is three requests in two seconds and each command needs four or more.

let api: Api;
let env: Record<string, string>;
const dir = mkdtempSync(join(tmpdir(), 'ito-audit-limit-'));

beforeAll(async () => {
  api = await startApi({ rateLimit: { max: 3, timeWindowMs: 2_000 } });
  const seed = await seedTenant(api);
  const auditor = (await api.admin.createKey({ tenantId: seed.tenant.tenant_id, scopes: ['audit:read'] })).key;
  await settled(api.pool);
  await api.ledger.sealPending();
  env = { ITO_API_URL: api.url, ITO_API_KEY: auditor, ITO_HOME: join(dir, 'home') };
});
afterAll(async () => api.close());

describe('ito audit past the credential’s request budget', () => {
  it('verify and export wait out the rate limit and complete', { timeout: 60_000 }, async () => {
    // Spend the window's budget first, so the commands meet the limit part way.
    for (let i = 0; i < 3; i++) await api.call('GET', '/v1/audit/digest', { key: env.ITO_API_KEY! });
    const verified = await runCli(['audit', 'verify', '--json'], { env, timeoutMs: 30_000 });
    expect(verified.code).toBe(0);
    expect(verified.json().data).toMatchObject({ verified: true });

    const out = join(dir, 'export.jsonl');
    const exported = await runCli(['audit', 'export', '--out', out, '--json'], { env, timeoutMs: 30_000 });
    expect(exported.code).toBe(0);
    const records = exported.json().data.records as number;
    expect(records).toBeGreaterThan(0);
    expect(readFileSync(out, 'utf8').split('\n').filter(Boolean)).toHaveLength(records + 2);
  });
});
