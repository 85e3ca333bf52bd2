import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestDigest } from '@ito/contracts';
import { runCli } from './support/cli.js';
import { envelope, startCountingServer } from './support/counting-server.js';

const EXAMPLE = readFileSync(new URL('../../../examples/manifest.json', import.meta.url));

let server: Awaited<ReturnType<typeof startCountingServer>>;
let dir: string;
let env: Record<string, string>;

function file(name: string, bytes: Buffer | string = EXAMPLE, mode = 0o644): string {
  const p = join(dir, name);
  writeFileSync(p, bytes);
  chmodSync(p, mode);
  return p;
}

beforeAll(async () => {
  server = await startCountingServer(() => ({ status: 200, body: envelope({ plan: { tp: 8 }, manifest_digest: 'sha256:x' }) }));
  dir = mkdtempSync(join(tmpdir(), 'ito-manifest-'));
  env = { ITO_API_URL: server.url, ITO_API_KEY: 'sk_test_manifest_refusals', ITO_HOME: join(dir, 'home') };
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const cases: [string, () => string, string, RegExp?][] = [
  ['a relative path', () => 'manifest.json', 'manifest_path_not_absolute', /must be absolute/],
  ['an absolute path with ".." in it', () => `${dirname(file('dotted.json'))}/nowhere/../dotted.json`, 'manifest_path_not_absolute', /not normalised.*; use \/.*\/dotted\.json$/],
  ['a file that does not exist', () => join(dir, 'missing.json'), 'manifest_not_regular_file', /^no such file: \/.*\/missing\.json$/],
  ['a symlinked file', () => {
    const target = file('real.json');
    const link = join(dir, 'link.json');
    symlinkSync(target, link);
    return link;
  }, 'manifest_symlink'],
  ['a file under a symlinked directory', () => {
    mkdirSync(join(dir, 'realdir'), { mode: 0o755 });
    writeFileSync(join(dir, 'realdir', 'm.json'), EXAMPLE, { mode: 0o644 });
    symlinkSync(join(dir, 'realdir'), join(dir, 'linkdir'));
    return join(dir, 'linkdir', 'm.json');
  }, 'manifest_symlink'],
  ['a FIFO (which must not hang the reader)', () => {
    const p = join(dir, 'fifo.json');
    execFileSync('mkfifo', ['-m', '0644', p]);
    return p;
  }, 'manifest_not_regular_file'],
  ['a directory', () => {
    const p = join(dir, 'adir.json');
    mkdirSync(p, { mode: 0o755 });
    return p;
  }, 'manifest_not_regular_file'],
  ['a world-writable file (0666)', () => file('open.json', EXAMPLE, 0o666), 'manifest_unsafe_permissions'],
  ['a file in a world-writable directory without the sticky bit', () => {
    const d = join(dir, 'shared');
    mkdirSync(d);
    chmodSync(d, 0o777);
    writeFileSync(join(d, 'm.json'), EXAMPLE, { mode: 0o644 });
    return join(d, 'm.json');
  }, 'manifest_unsafe_permissions'],
  ["another user's file", () => {
    const p = file('nobody.json');
    chownSync(p, 65534, 65534);
    return p;
  }, 'manifest_wrong_owner'],
  ['a file over 1 MiB', () => file('big.json', Buffer.alloc(1024 * 1024 + 1, 0x20)), 'manifest_too_large'],
];

describe('manifest refusals reach no server', () => {
  for (const [label, make, code, message] of cases) {
    it(`refuses ${label} with ${code}, exit 3, live_api_contacted false, and no request`, async () => {
      const path = make();
      const before = server.seen.length;
      const res = await runCli(['plan', '--booking', 'bkg_1', '--manifest', path, '--json'], { env, timeoutMs: 10_000 });
      expect(res.code).toBe(3);
      const out = res.json();
      expect(out).toMatchObject({ ok: false, live_api_contacted: false, error: { code } });
      if (message) expect(out.error.message).toMatch(message);
      expect(server.seen.length).toBe(before);
    });
  }

  // Assembled at run time so this file carries no credential-shaped literal.
  const planted = 'AKIA' + 'QX7RZ2LMN4PT8VWY';
  const text = EXAMPLE.toString('utf8');
  const ambiguous: [string, string, string][] = [
    ['a duplicate key at the top', text.replace('"name":', '"name": "x",\n  "name":'), '$.name'],
    ['a duplicate budget ceiling', text.replace('"ceiling_usd": 60000,', '"ceiling_usd": 60000, "ceiling_usd": 1,'), '$.budget.ceiling_usd'],
    ['a credential in the first copy of a duplicate', text.replace('"revision": "meta', `"revision": "${planted}", "revision": "meta`), '$.model.revision'],
    ['a __proto__ key', text.replace('"pretrain": {', '"pretrain": { "__proto__": {},'), '$.eval.gates.pretrain["<key #1>"]'],
    ['nesting past the limit', text.replace('"ito-evals/v1",\n    "gates"', `${'['.repeat(100)}${']'.repeat(100)},\n    "gates"`), '$.eval.battery'],
    ['broken JSON', text.replace('"battery": "ito-evals/v1"', `"battery": ${planted}`), '$.eval'],
  ];
  for (const [label, body, path] of ambiguous) {
    it(`refuses ${label} locally as manifest_invalid at ${path}…, exit 3, with no request and nothing echoed`, async () => {
      const p = file(`ambiguous-${label.replace(/\W+/g, '-')}.json`, body);
      const before = server.seen.length;
      for (const argv of [
        ['plan', '--booking', 'bkg_1', '--manifest', p, '--json'],
        ['confirm', 'request', '--action', 'train.create', '--booking', 'bkg_1', '--manifest', p, '--json'],
        ['train', '--booking', 'bkg_1', '--manifest', p, '--confirmation-ref', 'cfm_1', '--idempotency-key', 'k-amb', '--json'],
      ]) {
        const res = await runCli(argv, { env });
        expect(res.code).toBe(3);
        expect(res.json()).toMatchObject({ ok: false, live_api_contacted: false, error: { code: 'manifest_invalid' } });
        expect(res.json().error.details.issues[0].path.startsWith(path)).toBe(true);
        const all = res.stdout + res.stderr;
        for (let i = 0; i + 6 <= planted.length; i++) expect(all).not.toContain(planted.slice(i, i + 6));
      }
      expect(server.seen.length).toBe(before);
    });
  }

  it('refuses for train too, before any credential or network use', async () => {
    const path = file('train-open.json', EXAMPLE, 0o646);
    const before = server.seen.length;
    const res = await runCli(['--json', 'train', '--booking', 'bkg_1', '--manifest', path, '--confirmation-ref', 'cnf_1', '--idempotency-key', 'k-1'], { env });
    expect(res.code).toBe(3);
    expect(res.json()).toMatchObject({ ok: false, live_api_contacted: false, error: { code: 'manifest_unsafe_permissions' } });
    expect(server.seen.length).toBe(before);
  });

  it('sends a safe manifest byte for byte, with the digest of those bytes', async () => {
    const path = file('good.json');
    const before = server.seen.length;
    const res = await runCli(['confirm', 'request', '--action', 'train.create', '--booking', 'bkg_1', '--manifest', path, '--json'], { env });
    expect(res.code).toBe(0);
    expect(res.json()).toMatchObject({ ok: true, live_api_contacted: true });
    expect(server.seen.length).toBe(before + 1);
    const sent = JSON.parse(server.seen.at(-1)!.body);
    expect(Buffer.from(sent.manifest, 'utf8').equals(EXAMPLE)).toBe(true);
    expect(sent.manifest_digest).toBe(manifestDigest(EXAMPLE));
    expect(server.seen.at(-1)!.headers.authorization).toBe('Bearer sk_test_manifest_refusals');
  });
});
