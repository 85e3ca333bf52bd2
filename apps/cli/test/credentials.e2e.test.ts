import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handOver } from '../../../packages/embedded/src/identity.js';
import { runCli } from './support/cli.js';
import { envelope, refusal, startCountingServer } from './support/counting-server.js';

const GOOD_KEY = 'sk_test_login_key_abcdef0123456789';
let server: Awaited<ReturnType<typeof startCountingServer>>;
let logoutFails = false;
let root: string;
let home: string;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startCountingServer((req) => {
    const key = req.headers.authorization?.replace(/^Bearer /, '');
    if (key !== GOOD_KEY) return { status: 401, body: refusal('unauthenticated', 'unknown key') };
    if (req.url === '/v1/auth/whoami') return { status: 200, body: envelope({ tenant_id: 'ten_1', key_id: 'key_1', scopes: ['runs:read'] }) };
    if (req.url === '/v1/auth/logout') return logoutFails ? { status: 503, body: refusal('internal_error', 'try later', true) } : { status: 200, body: envelope({ revoked: true }) };
    return { status: 404, body: refusal('not_found', 'no route') };
  });
  root = mkdtempSync(join(tmpdir(), 'ito-cred-'));
});
afterAll(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});
beforeEach(() => {
  home = mkdtempSync(join(root, 'home-'));
  rmSync(home, { recursive: true });
  env = { ITO_API_URL: server.url, ITO_HOME: home };
  logoutFails = false;
});

const mode = (p: string) => statSync(p).mode & 0o777;
const QUIET = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

describe('login, auth and logout', () => {
  it('reads the key from stdin, verifies it, and stores it 0600 in a 0700 directory', async () => {
    const res = await runCli(['login', '--json'], { env, input: `${GOOD_KEY}\n` });
    expect(res.code).toBe(0);
    expect(res.json()).toMatchObject({ ok: true, data: { tenant_id: 'ten_1' } });
    expect(res.stdout + res.stderr).not.toContain(GOOD_KEY);
    const file = join(home, 'cli', 'credentials.json');
    expect(mode(join(home, 'cli'))).toBe(0o700);
    expect(mode(file)).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).key).toBe(GOOD_KEY);

    const auth = await runCli(['auth', '--json'], { env });
    expect(auth.code).toBe(0);
    expect(server.seen.at(-1)!.headers.authorization).toBe(`Bearer ${GOOD_KEY}`);
  });

  it('stores nothing when the server rejects the key', async () => {
    const res = await runCli(['login', '--json'], { env, input: 'sk_wrong' });
    expect(res.code).toBe(5);
    expect(existsSync(join(home, 'cli', 'credentials.json'))).toBe(false);
  });

  it('is a usage error with an empty stdin, and never prompts', async () => {
    const res = await runCli(['login', '--json'], { env, input: '' });
    expect(res.code).toBe(2);
  });

  it('refuses a credential file readable by others, contacting nothing', async () => {
    await runCli(['login'], { env, input: GOOD_KEY });
    const file = join(home, 'cli', 'credentials.json');
    chmodSync(file, 0o644);
    const before = server.seen.length;
    const res = await runCli(['auth', '--json'], { env });
    expect(res.code).toBe(5);
    expect(res.json()).toMatchObject({ ok: false, live_api_contacted: false, error: { code: 'unauthenticated' } });
    expect(res.json().error.message).toContain('0644');
    expect(server.seen.length).toBe(before);
  });

  it('refuses a credential directory open to others', async () => {
    await runCli(['login'], { env, input: GOOD_KEY });
    chmodSync(join(home, 'cli'), 0o755);
    const res = await runCli(['auth', '--json'], { env });
    expect(res.code).toBe(5);
    expect(res.json().error.message).toContain('0755');
  });

  it('falls back to ITO_API_KEY when no login is stored', async () => {
    const res = await runCli(['auth', '--json'], { env: { ...env, ITO_API_KEY: GOOD_KEY } });
    expect(res.code).toBe(0);
  });

  it('keeps the local file when the remote revoke fails, removes it when it succeeds', async () => {
    await runCli(['login'], { env, input: GOOD_KEY });
    const file = join(home, 'cli', 'credentials.json');
    logoutFails = true;
    const failed = await runCli(['logout', '--json'], { env });
    expect(failed.code).not.toBe(0);
    expect(existsSync(file)).toBe(true);
    logoutFails = false;
    const done = await runCli(['logout', '--json'], { env });
    expect(done.code).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(server.seen.filter((r) => r.url === '/v1/auth/logout').every((r) => r.method === 'POST')).toBe(true);
  });

  it('logs in on an ITO_HOME that ito-server opened to its database user (as root), keeping its own 0700 directory', async () => {
    // What ito-server does as root before starting the embedded database: hand $ITO_HOME/pg to the database's
    // user, which leaves $ITO_HOME searchable by others (0701).
    mkdirSync(join(home, 'pg'), { recursive: true, mode: 0o700 });
    await handOver(join(home, 'pg'), { kind: 'service', uid: process.getuid!(), gid: process.getgid!(), name: 'ito-pg' }, QUIET);
    expect(mode(home)).toBe(0o701);
    const res = await runCli(['login', '--json'], { env, input: GOOD_KEY });
    expect(res.code).toBe(0);
    expect(mode(join(home, 'cli'))).toBe(0o700);
    expect(mode(join(home, 'cli', 'credentials.json'))).toBe(0o600);
    expect((await runCli(['auth', '--json'], { env })).code).toBe(0);
    // The database's directory is untouched by the client.
    expect(mode(join(home, 'pg'))).toBe(0o700);
  });

  it('uses ITO_TOKEN_FILE when set', async () => {
    const tokenFile = join(root, `custom-${Date.now()}`, 'token.json');
    const res = await runCli(['login', '--json'], { env: { ...env, ITO_TOKEN_FILE: tokenFile }, input: GOOD_KEY });
    expect(res.code).toBe(0);
    expect(mode(tokenFile)).toBe(0o600);
  });

  it('rejects a credential file that is a symlink', async () => {
    const target = join(root, `target-${Date.now()}.json`);
    writeFileSync(target, JSON.stringify({ version: 1, api_url: server.url, key: GOOD_KEY, stored_at: '' }), { mode: 0o600 });
    const { symlinkSync } = await import('node:fs');
    mkdirSync(join(home, 'cli'), { recursive: true, mode: 0o700 });
    symlinkSync(target, join(home, 'cli', 'credentials.json'));
    const res = await runCli(['auth', '--json'], { env });
    expect(res.code).toBe(5);
  });
});
