import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type Api } from '../../../test/support/api.js';
import { seedKnownTelemetry } from '../../../test/support/telemetry.js';
import { T0, at, nodeMs } from '../../../packages/telemetry/test/support/known-history.js';
import { runCli } from './support/cli.js';

/** `ito desk telemetry` through the BUILT CLI against a real API holding the telemetry package's known history. */
let api: Api;
let seed: Awaited<ReturnType<typeof seedKnownTelemetry>>;
let dir: string;
const since = new Date(T0).toISOString();
const until = new Date(at(2000)).toISOString();

beforeAll(async () => {
  api = await startApi();
  seed = await seedKnownTelemetry(api);
  dir = mkdtempSync(join(tmpdir(), 'ito-desk-'));
});
afterAll(async () => {
  await api?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const ito = (args: string[], key: string) => runCli(args, { env: { ITO_API_URL: api.url, ITO_API_KEY: key, ITO_HOME: join(dir, 'home') } });

describe('ito desk telemetry', () => {
  it('--json is the API answer in one envelope', async () => {
    const res = await ito(['desk', 'telemetry', '--group-by', 'booking', '--since', since, '--until', until, '--json'], seed.deskKey);
    expect(res.code).toBe(0);
    const busy = res.json().data.groups.find((g: any) => g.group.booking === seed.bookingId);
    expect(busy).toMatchObject({ booked_node_ms: nodeMs(2000), productive_node_ms: nodeMs(530), goodput: 0.265 });
  });

  it('shows people a table per group', async () => {
    const res = await ito(['desk', 'telemetry', '--group-by', 'region,fabric', '--since', since, '--until', until], seed.deskKey);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/REGION\s+FABRIC\s+NODE_H\s+GOODPUT\s+TOP_BADPUT/);
    expect(res.stdout).toMatch(/us-east-1\s+infiniband\s+1\.1\s+26\.5%\s+idle\s+900\.0\s+0\.40\s+0\.80\s+9\.43/);
  });

  it('a tenant key is refused with forbidden, exit 1', async () => {
    const res = await ito(['desk', 'telemetry', '--json'], seed.requesterKey);
    expect(res.code).toBe(1);
    expect(res.json()).toMatchObject({ ok: false, error: { code: 'forbidden' } });
  });
});
