import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ItoApi, ItoClient, poll } from '@ito/client';
import { seedTenant, startApi, trainBody, trainConfirmation, type Api, type Seed } from '../../../test/support/api.js';
import { ITO } from './support/cli.js';

/**
 * A key revoked while a watch is running, against the real API on a fresh database: the watch ends on the
 * first `credential_revoked` answer instead of polling on with a dead credential. The API runs no workers, so
 * the run stays `reserved` and only the revocation can end the watch.
 */

let api: Api;
let seed: Seed;
let runId: string;
let home: string;

beforeAll(async () => {
  api = await startApi();
  seed = await seedTenant(api);
  const ref = await trainConfirmation(api, seed);
  const r = await api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, ref), headers: { 'idempotency-key': 'watch-revoked-1' } });
  expect(r.status).toBe(201);
  runId = r.body.data.run_id as string;
  home = mkdtempSync(join(tmpdir(), 'ito-watch-revoked-'));
});

afterAll(async () => {
  await api?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

/** The API's own access log: answers it gave to GET /v1/runs/:id, by status (a refused one names no id). */
function runReads(): number[] {
  return api.logLines
    .flatMap((chunk) => chunk.split('\n').filter(Boolean))
    .map((l) => JSON.parse(l) as { route?: string; method?: string; ids?: { id?: string }; status?: number })
    .filter((l) => l.method === 'GET' && l.route === '/v1/runs/:id' && (l.status === 401 || l.ids?.id === runId))
    .map((l) => l.status!);
}

async function readerKey(): Promise<{ key: string; key_id: string }> {
  return api.admin.createKey({ tenantId: seed.tenant.tenant_id, scopes: ['runs:read'] });
}

describe('revoking a key in the middle of a watch', () => {
  it('ends the client watch on the first credential_revoked answer', async () => {
    const reader = await readerKey();
    const client = new ItoClient({ baseUrl: api.url, credential: reader.key, sleep: async () => {} });
    const apiClient = new ItoApi(client);
    let reads = 0;
    let updates = 0;
    const answer = await poll(
      async () => {
        reads++;
        // Two reads succeed; the key is revoked before the third, as if from another terminal.
        if (reads === 3) await api.admin.revokeKey({ keyId: reader.key_id });
        return apiClient.getRun(runId);
      },
      { intervalMs: 1, done: () => false, maxIterations: 25, sleep: async () => {}, onUpdate: () => void updates++ },
    );
    expect(answer).toMatchObject({ ok: false, error: { code: 'credential_revoked' } });
    expect(updates).toBe(2);
    expect(reads).toBe(3);
  });

  it('ends `ito status --watch` with exit 5 and one credential_revoked envelope, after exactly one refused read', async () => {
    const reader = await readerKey();
    const refusedBefore = runReads().filter((s) => s === 401).length;
    const child = spawn(process.execPath, [ITO, 'status', runId, '--watch', '--interval', '50', '--json'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ITO_HOME: join(home, 'ito'), ITO_API_URL: api.url, ITO_API_KEY: reader.key },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (c) => (stdout += c));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      // Wait on the API's record of the watch reading the run, then revoke while it keeps polling.
      await until(() => runReads().filter((s) => s === 200).length >= 2);
      await api.admin.revokeKey({ keyId: reader.key_id });
      const code = await exited;
      expect(code).toBe(5);
      const lines = stdout.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ ok: false, live_api_contacted: true, error: { code: 'credential_revoked' } });
      expect(runReads().filter((s) => s === 401).length - refusedBefore).toBe(1);
      expect(stdout).not.toContain(reader.key);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

async function until(cond: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
