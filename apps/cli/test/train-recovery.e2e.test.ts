import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_MANIFEST, seedTenant, startApi, trainConfirmation, type Api, type Seed } from '../../../test/support/api.js';
import { runCli } from './support/cli.js';
import { startDroppingProxy } from './support/dropping-proxy.js';

let api: Api;
let seed: Seed;
let dir: string;
let manifestPath: string;

beforeAll(async () => {
  api = await startApi();
  seed = await seedTenant(api);
  dir = mkdtempSync(join(tmpdir(), 'ito-recovery-'));
  manifestPath = join(dir, 'manifest.json');
  writeFileSync(manifestPath, EXAMPLE_MANIFEST);
  chmodSync(manifestPath, 0o644);
});

afterAll(async () => {
  await api.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ito train through a connection that dies after the server acted', () => {
  it('finds the run by its idempotency key, reports it, and exactly one run exists', async () => {
    const ref = await trainConfirmation(api, seed);
    const proxy = await startDroppingProxy(api.url, 'POST /v1/runs');
    try {
      const res = await runCli(
        ['--json', 'train', '--booking', seed.bookingId, '--manifest', manifestPath, '--confirmation-ref', ref, '--idempotency-key', 'recovery-key-1'],
        { env: { ITO_API_URL: proxy.url, ITO_API_KEY: seed.requester, ITO_HOME: join(dir, 'home') } },
      );
      expect(proxy.drops).toBe(1);
      expect(res.code).toBe(0);
      const out = res.json();
      expect(out.ok).toBe(true);
      expect(out.live_api_contacted).toBe(true);
      expect(out.notice).toMatch(/recovered after an ambiguous transport failure/);
      expect(out.data.run_id).toMatch(/\S/);
      // The lookup came before anything else, and the body was never sent a second time.
      expect(proxy.requests).toEqual(['POST /v1/runs HTTP/1.1', 'GET /v1/runs?idempotency_key=recovery-key-1 HTTP/1.1']);
      const { rows } = await api.pool.query('select run_id from runs');
      expect(rows).toHaveLength(1);
      expect(rows[0].run_id).toBe(out.data.run_id);
      expect(res.stdout + res.stderr).not.toContain(seed.requester);
    } finally {
      await proxy.close();
    }
  });

  it('status --idempotency-key finds that same run afterwards', async () => {
    const { rows } = await api.pool.query<{ run_id: string }>('select run_id from runs');
    const res = await runCli(['status', '--idempotency-key', 'recovery-key-1', '--json'], {
      env: { ITO_API_URL: api.url, ITO_API_KEY: seed.requester, ITO_HOME: join(dir, 'home') },
    });
    expect(res.code).toBe(0);
    expect(res.json().data.run_id).toBe(rows[0]!.run_id);
  });
});
