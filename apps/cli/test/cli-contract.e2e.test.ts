import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support/cli.js';
import { envelope, refusal, startCountingServer } from './support/counting-server.js';

let server: Awaited<ReturnType<typeof startCountingServer>>;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startCountingServer((req) => {
    if (req.url === '/v1/bookings') return { status: 200, body: envelope({ bookings: [{ booking_id: 'bkg_1', status: 'completed', gpu: 'h200' }] }) };
    if (req.url.startsWith('/v1/bookings/bkg_gone')) return { status: 409, body: refusal('booking_expired', 'booking bkg_gone ended') };
    if (req.url === '/v1/runs/run_watch') {
      const n = server.seen.filter((r) => r.url === '/v1/runs/run_watch').length;
      const states = [
        { state: 'training', stage: 'pretrain', progress: { step: 100, total_steps: 300, tokens: 1000, loss: 2.5, eta_seconds: 120 } },
        { state: 'training', stage: 'pretrain', progress: { step: 200, total_steps: 300, tokens: 2000, loss: 2.1, eta_seconds: 60 } },
        { state: 'succeeded', stage: 'post_training', progress: { step: 300, total_steps: 300, tokens: 3000, loss: 1.9, eta_seconds: 0 } },
      ];
      return { status: 200, body: envelope({ run_id: 'run_watch', ...states[Math.min(n - 1, 2)] }) };
    }
    if (req.url === '/v1/runs/run_revoked') return { status: 401, body: refusal('credential_revoked', 'this key was revoked') };
    // Routes the server does not offer yet answer like Fastify's default 404, not with an envelope.
    return { status: 404, body: { message: `Route ${req.method}:${req.url} not found`, error: 'Not Found', statusCode: 404 } };
  });
  env = { ITO_API_URL: server.url, ITO_API_KEY: 'sk_test_contract_0123456789', ITO_HOME: '/nonexistent-ito-home' };
});
afterAll(() => server.close());

describe('capabilities', () => {
  // How fast it answers is measured by `npm run bench:cli` beside `node -e 0`, not timed here on a shared machine.
  it('answers with no ITO_* environment, no credential and no network', async () => {
    const before = server.seen.length;
    const res = await runCli(['capabilities', '--json'], { env: {} });
    expect(res.code).toBe(0);
    const out = res.json();
    expect(out).toMatchObject({ ok: true, live_api_contacted: false });
    // One sentence that says what the CLI is and that the manifest describes its verbs (the bridge refuses an empty one).
    expect(out.notice).toMatch(/^ito is the command-line client of Itô Training\b[^.]*describes each of its verbs[^.]*\.$/);
    expect(out.data.contract_version).toBe('ito.cli.capabilities.v1');
    expect(out.data.cli).toMatchObject({ name: 'ito', private: true });
    expect(out.data.mcp_tools).toEqual([]);
    expect(out.data.output_contract).toMatchObject({ json_success_envelope: true, unsupported_commands_contact_nothing: true });
    const byName = Object.fromEntries(out.data.commands.map((c: any) => [c.name, c]));
    expect(byName.train).toMatchObject({ side_effect: 'workload_start', authority: 'entitled_workload', network: 'api' });
    expect(byName.cancel.side_effect).toBe('workload_cancel');
    expect(byName.cleanup.side_effect).toBe('workload_cleanup');
    expect(byName.restart.side_effect).toBe('workload_restart');
    for (const read of ['status', 'logs', 'metrics', 'checkpoints', 'events', 'plan', 'eligibility', 'bookings list']) expect(byName[read].side_effect).toBe('none');
    expect(server.seen.length).toBe(before);
  });
});

describe('capabilities for people', () => {
  it('prints a table with headers and an availability column, marking preview verbs', async () => {
    const res = await runCli(['capabilities'], { env: {} });
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ito \S+ \(ito\.cli\.capabilities\.v1\)$/);
    expect(lines[2]).toMatch(/^NAME\s+AVAILABILITY\s+AUTH\s+NETWORK\s+SIDE_EFFECT\s+AUTHORITY$/);
    expect(lines).toContainEqual(expect.stringMatching(/^train\s+available\s+requester\s+api\s+workload_start\s+entitled_workload$/));
    expect(lines).toContainEqual(expect.stringMatching(/^desk telemetry\s+available\s+desk\s+api\s+none\s+none$/));
    expect(res.stderr).toMatch(/note: ito is the command-line client/);
  });
});

describe('--json envelopes', () => {
  it('prints exactly one envelope on success, with --json after the verb', async () => {
    const res = await runCli(['bookings', 'list', '--json'], { env });
    expect(res.code).toBe(0);
    expect(res.stdout.trim().split('\n')).toHaveLength(1);
    expect(res.json()).toEqual(envelope({ bookings: [{ booking_id: 'bkg_1', status: 'completed', gpu: 'h200' }] }));
  });

  it('accepts --json before the verb', async () => {
    const res = await runCli(['--json', 'bookings'], { env });
    expect(res.code).toBe(0);
    expect(res.json().data.bookings[0].booking_id).toBe('bkg_1');
  });

  it('prints the server refusal as the envelope, exit 1', async () => {
    const res = await runCli(['--json', 'bookings', 'show', 'bkg_gone'], { env });
    expect(res.code).toBe(1);
    expect(res.json()).toMatchObject({ ok: false, live_api_contacted: true, error: { code: 'booking_expired' } });
  });

  it('maps credential_revoked to exit 5', async () => {
    const res = await runCli(['status', 'run_revoked', '--json'], { env });
    expect(res.code).toBe(5);
    expect(res.json().error.code).toBe('credential_revoked');
  });

  it('stops a watch at once when the credential is revoked', async () => {
    const before = server.seen.filter((r) => r.url === '/v1/runs/run_revoked').length;
    const res = await runCli(['status', 'run_revoked', '--watch', '--interval', '50', '--json'], { env });
    expect(res.code).toBe(5);
    expect(server.seen.filter((r) => r.url === '/v1/runs/run_revoked').length - before).toBe(1);
  });

  it('watches a run to its end with progress on stderr and one envelope on stdout', async () => {
    const res = await runCli(['status', 'run_watch', '--watch', '--interval', '50', '--json'], { env });
    expect(res.code).toBe(0);
    expect(res.json()).toMatchObject({ ok: true, data: { run_id: 'run_watch', state: 'succeeded' } });
    expect(res.stderr).toContain('state training · stage pretrain · step 100/300 · tokens 1000 · loss 2.5000 · ETA 2m00s');
    expect(res.stderr).toContain('state succeeded');
  });

  it('turns a route the server lacks into not_found instead of a crash', async () => {
    const res = await runCli(['desk', 'telemetry', '--group-by', 'region', '--json'], { env });
    expect(res.code).toBe(1);
    expect(res.json()).toMatchObject({ ok: false, live_api_contacted: true, error: { code: 'not_found' } });
    expect(server.seen.at(-1)!.url).toBe('/v1/desk/telemetry?group_by=region');
  });

  it('shows people a table and errors on stderr without --json', async () => {
    const ok = await runCli(['bookings'], { env });
    expect(ok.stdout).toMatch(/BOOKING_ID\s+STATUS\s+GPU\nbkg_1\s+completed\s+h200/);
    const bad = await runCli(['bookings', 'show', 'bkg_gone'], { env });
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain('error [booking_expired]');
  });
});

describe('usage errors contact nothing and exit 2', () => {
  const cases: [string, string[]][] = [
    ['an unknown verb', ['frobnicate', '--json']],
    ['an unknown subverb', ['bookings', 'burn', '--json']],
    ['an unknown flag', ['bookings', 'list', '--colour', '--json']],
    ['a missing required flag', ['train', '--booking', 'bkg_1', '--json']],
    ['train without --confirmation-ref', ['train', '--booking', 'bkg_1', '--manifest', '/tmp/m.json', '--idempotency-key', 'k', '--json']],
    ['cancel without --confirmation-ref', ['cancel', 'run_1', '--idempotency-key', 'k', '--json']],
    ['a missing argument', ['--json', 'logs']],
    ['both a run id and a key', ['status', 'run_1', '--idempotency-key', 'k', '--json']],
    ['a bad timeout', ['bookings', '--timeout', 'soon', '--json']],
    ['a verb-only flag before the verb', ['--booking', 'b', 'eligibility', '--json']],
    ['a booking on a run-action confirmation', ['confirm', 'request', '--action', 'run.cancel', '--run', 'run_1', '--booking', 'bkg_1', '--json']],
    ['--release-booking without its own confirmation', ['cleanup', 'run_1', '--confirmation-ref', 'c', '--idempotency-key', 'k', '--release-booking', '--json']],
  ];
  for (const [label, args] of cases) {
    it(`refuses ${label}`, async () => {
      const before = server.seen.length;
      const res = await runCli(args, { env });
      expect(res.code).toBe(2);
      expect(res.json()).toMatchObject({ ok: false, live_api_contacted: false, error: { code: 'validation_failed' } });
      expect(server.seen.length).toBe(before);
    });
  }

  for (const flag of ['--api-key', '--key', '--token', '--password', '--secret', '--credential']) {
    it(`refuses the secret-looking flag ${flag} without echoing its value`, async () => {
      const before = server.seen.length;
      const res = await runCli(['bookings', `${flag}=hunter2-secret-value`, '--json'], { env });
      expect(res.code).toBe(2);
      expect(res.stdout + res.stderr).not.toContain('hunter2-secret-value');
      expect(res.json().error.code).toBe('validation_failed');
      expect(server.seen.length).toBe(before);
    });
  }
});

describe('help', () => {
  it('has an example for every verb', async () => {
    const caps = (await runCli(['capabilities', '--json'], { env: {} })).json();
    for (const c of caps.data.commands) {
      const res = await runCli([...c.name.split(' '), '--help'], { env: {} });
      expect(res.code, c.name).toBe(0);
      expect(res.stdout, c.name).toContain('Example:');
    }
  });
});

describe('transport', () => {
  it('reports connect_failed with exit 4 and live_api_contacted false for a closed port', async () => {
    const res = await runCli(['bookings', '--json'], { env: { ...env, ITO_API_URL: 'http://127.0.0.1:9' } });
    expect(res.code).toBe(4);
    expect(res.json()).toMatchObject({ ok: false, live_api_contacted: false, error: { code: 'connect_failed' } });
    // The URL tried, and the variable that points the CLI elsewhere (a server started with another ITO_PORT).
    expect(res.json().error.details.hint).toBe('tried http://127.0.0.1:9; set ITO_API_URL to reach a server elsewhere (for example one started with another ITO_PORT)');
    const human = await runCli(['bookings'], { env: { ...env, ITO_API_URL: 'http://127.0.0.1:9' } });
    expect(human.stderr).toContain('tried http://127.0.0.1:9; set ITO_API_URL');
  });

  it('never prints the credential', async () => {
    const res = await runCli(['bookings', '--json'], { env: { ...env, ITO_API_URL: 'http://127.0.0.1:9' } });
    expect(res.stdout + res.stderr).not.toContain(env.ITO_API_KEY);
  });

  it('refuses with unauthenticated (exit 5) and contacts nothing when no credential exists', async () => {
    const before = server.seen.length;
    const res = await runCli(['bookings', '--json'], { env: { ITO_API_URL: server.url, ITO_HOME: '/nonexistent-ito-home' } });
    expect(res.code).toBe(5);
    expect(res.json()).toMatchObject({ ok: false, live_api_contacted: false, error: { code: 'unauthenticated' } });
    expect(server.seen.length).toBe(before);
  });
});
