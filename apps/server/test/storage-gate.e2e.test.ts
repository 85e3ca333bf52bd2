import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminService } from '@ito/runs';
import { manifestDigest } from '@ito/contracts';
import { S3StorageDriver } from '@ito/storage';
import { h200Booking } from '../../../test/fixtures/bookings.js';
import { EXAMPLE_MANIFEST } from '../../../test/support/api.js';
import { freshDatabase } from '../../../test/support/db.js';
import { startS3Server, type TestS3Server } from '../../../test/support/s3-server.js';
import { freePort } from '../../../test/support/services.js';
import { expectCleanLogs, homes, spawnServer, stopWithSigterm, waitReady, type Spawned } from './support/server.js';

const PLANTED_SECRET = 'planted-s3-secret-7c1e9a';
const tmpHomes = homes();
let s3: TestS3Server;
let db: Awaited<ReturnType<typeof freshDatabase>>;
let pool: pg.Pool;
let server: Spawned;
let url: string;

beforeAll(async () => {
  s3 = await startS3Server(['ito-ckpt']);
  db = await freshDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 4 });
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  // The API role alone, its S3 store and credentials from its environment only.
  server = spawnServer(['start', '--role', 'api'], {
    ITO_HOME: tmpHomes.create(),
    ITO_PORT: String(port),
    ITO_DATABASE_URL: db.url,
    ITO_S3_ENDPOINT: s3.endpoint,
    ITO_S3_PATH_STYLE: '1',
    ITO_S3_ACCESS_KEY_ID: 'S3RVER',
    ITO_S3_SECRET_ACCESS_KEY: PLANTED_SECRET,
    ITO_STORAGE_PROBE_TIMEOUT_MS: '5000',
  });
  await waitReady(port, server);
}, 90_000);
afterAll(async () => {
  if (server) await stopWithSigterm(server);
  await pool?.end();
  await db?.drop();
  await s3?.stop();
  tmpHomes.removeAll();
});

describe('ito-server proves checkpoint storage at the confirmation request', () => {
  it('accepts s3:// it can write, refuses a scheme it has no driver for, and never logs the store`s secret', async () => {
    const admin = createAdminService({ pool });
    const tenant = await admin.createTenant({ name: 'acme', requesterPrincipal: 'ml@acme', approverPrincipal: 'finance@acme' });
    const booking = await admin.createBooking(h200Booking(tenant.tenant_id));
    const request = (storage: string) => {
      const m = JSON.parse(EXAMPLE_MANIFEST);
      m.checkpoint.storage = storage;
      const manifest = JSON.stringify(m, null, 2);
      return fetch(`${url}/v1/confirmations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.requester_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'train.create', booking_id: booking.booking_id, manifest, manifest_digest: manifestDigest(manifest) }),
      });
    };

    const ok = await request('s3://ito-ckpt/code-8b/');
    expect(ok.status, await ok.clone().text()).toBe(201);
    const driver = new S3StorageDriver(s3.options());
    try {
      expect(await driver.list('s3://ito-ckpt/')).toEqual([]);
    } finally {
      driver.close();
    }

    const gs = await request('gs://acme-checkpoints/code-8b/');
    expect(gs.status).toBe(422);
    const body = (await gs.json()) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({ code: 'checkpoint_storage_invalid', message: 'no storage driver for gs:// on this host (available: file://, s3://)' });
    const confirmations = await pool.query<{ n: number }>('select count(*)::int as n from confirmations');
    expect(confirmations.rows[0]!.n).toBe(1);

    expect(await stopWithSigterm(server)).toBe(0);
    expectCleanLogs(server.stderr(), PLANTED_SECRET);
  }, 60_000);
});
