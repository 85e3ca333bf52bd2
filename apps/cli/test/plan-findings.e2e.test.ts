import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_MANIFEST, footprint, seedTenant, startApi, type Api, type Seed } from '../../../test/support/api.js';
import { runCli } from './support/cli.js';

/** `ito plan` says every refusal it can foresee before a confirmation is asked for, and exits non-zero on one. */
let api: Api;
let seed: Seed;
let dir: string;
beforeAll(async () => {
  api = await startApi();
  seed = await seedTenant(api);
  dir = mkdtempSync(join(tmpdir(), 'ito-plan-findings-'));
});
afterAll(async () => {
  await api.close();
  rmSync(dir, { recursive: true, force: true });
});

function manifestFile(name: string, edit: (m: any) => void = () => undefined): string {
  const m = JSON.parse(EXAMPLE_MANIFEST);
  edit(m);
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(m, null, 2));
  chmodSync(path, 0o644);
  return path;
}

const plan = (path: string, json: boolean) =>
  runCli(['plan', '--booking', seed.bookingId, '--manifest', path, ...(json ? ['--json'] : [])], { env: { ITO_API_URL: api.url, ITO_API_KEY: seed.requester, ITO_HOME: dir } });

describe('ito plan foresees the gates', () => {
  it('lists every gate as passed for the example, and exits 0', async () => {
    const json = await plan(manifestFile('ok.json'), true);
    expect(json.code).toBe(0);
    const findings = json.json().data.findings;
    expect(findings.map((f: any) => [f.gate, f.status])).toEqual([
      ['capacity', 'passed'],
      ['term', 'passed'],
      ['ceiling', 'passed'],
      ['incremental cost', 'passed'],
      ['storage policy', 'passed'],
      ['data policy', 'passed'],
    ]);
    const human = await plan(manifestFile('ok.json'), false);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^gates:\n {2}✓ capacity/);
  });

  it('an estimate above the ceiling and a storage the account does not allow: both named, the first one its code, exit 1, nothing written', async () => {
    const path = manifestFile('refused.json', (m) => {
      m.budget.ceiling_usd = 1000;
      m.checkpoint.storage = 'ftp://acme-checkpoints/code-8b-cpt/';
    });
    const before = await footprint(api);
    const json = await plan(path, true);
    expect(json.code).toBe(1);
    const error = json.json().error;
    expect(error.code).toBe('budget_exceeded');
    expect(error.message).toMatch(/^this plan would be refused at the ceiling gate: estimated cost \$3206\.80 exceeds the ceiling \$1000\.00 \(and 1 more of 6 gates\)$/);
    expect(error.details.findings.filter((f: any) => f.status === 'refused').map((f: any) => [f.gate, f.code])).toEqual([
      ['ceiling', 'budget_exceeded'],
      ['storage policy', 'checkpoint_storage_invalid'],
    ]);
    expect(error.details.estimated_cost_usd).toBe(3206.8);

    const human = await plan(path, false);
    expect(human.code).toBe(1);
    expect(human.stderr).toContain('error [budget_exceeded]: this plan would be refused at the ceiling gate');
    expect(human.stderr).toMatch(/✗ ceiling +estimated cost \$3206\.80 exceeds the ceiling \$1000\.00 \(budget_exceeded\)/);
    expect(human.stderr).toMatch(/✗ storage policy +checkpoint storage scheme "ftp" is not allowed/);
    expect(human.stderr).toMatch(/✓ data policy/);
    expect(await footprint(api)).toEqual(before);
  });

  it('a plan the booking cannot hold leaves the cost gates not checked', async () => {
    const json = await plan(manifestFile('huge.json', (m) => (m.target.tokens = 4_000_000_000_000)), true);
    expect(json.code).toBe(1);
    const { code, details } = json.json().error;
    expect(code).toBe('capacity_insufficient');
    expect(details.findings.map((f: any) => [f.gate, f.status])).toEqual([
      ['capacity', 'passed'],
      ['term', 'refused'],
      ['ceiling', 'not_checked'],
      ['incremental cost', 'not_checked'],
      ['storage policy', 'passed'],
      ['data policy', 'passed'],
    ]);
  });
});
