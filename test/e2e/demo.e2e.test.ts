import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/services.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
/** What examples/data/sample-corpus.jsonl was made with (test/fixtures/dataprep/write-example-data.ts). */
const PLANTED = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/dataprep/sample-corpus.truth.json'), 'utf8')) as Array<{ kind: string }>;
const planted = (kind: string) => PLANTED.filter((t) => t.kind === kind).length;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Done {
  code: number | null;
  output: string;
}

/**
 * The machine's own trust store, where it names one: a newcomer's npm reaches the registry through whatever CA
 * their machine trusts, which is the machine's, not the project's.
 */
function machineTrust(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR']) {
    const value = process.env[name];
    if (value) out[name] = value;
  }
  return out;
}

/** A command with only PATH and HOME from this process (and the machine's trust store), as on a newcomer's fresh machine. */
function run(cmd: string, args: string[], opts: { cwd: string; env?: Record<string, string>; timeoutMs: number }): Promise<Done> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...machineTrust(), ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c));
    child.stderr.on('data', (c: Buffer) => (output += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, output });
    });
  });
}

function expectNoSecretsOrStacks(output: string): void {
  expect(output).not.toMatch(/ito_(sk|nc)_[A-Za-z0-9_-]{16}/);
  expect(output).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)/);
}

describe('a newcomer: clone, npm ci, npm run demo', () => {
  it('finishes with a succeeded run that survived a pulled node, and green audits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ito-demo-e2e-'));
    dirs.push(dir);
    const repo = join(dir, 'repo');
    // What the newcomer gets: the committed tree, nothing of this checkout's build or installs.
    const clone = await run('git', ['clone', '--quiet', '--no-hardlinks', ROOT, repo], { cwd: dir, timeoutMs: 60_000 });
    expect(clone.code, clone.output).toBe(0);
    const install = await run('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: repo, timeoutMs: 300_000 });
    expect(install.code, install.output.slice(-4000)).toBe(0);
    const home = join(dir, 'ito-home');
    const port = await freePort();
    const demo = await run('npm', ['run', 'demo', '--', '--port', String(port)], { cwd: repo, env: { ITO_HOME: home }, timeoutMs: 420_000 });
    expect(demo.code, demo.output.slice(-6000)).toBe(0);
    expectNoSecretsOrStacks(demo.output);
    const summary = JSON.parse(readFileSync(join(home, 'demo', 'summary.json'), 'utf8'));
    expect(summary.state).toBe('succeeded');
    expect(summary.node_pulled).toBe('gpu-02');
    // The pulled node was found lost, the run resumed without it, and the rebooted node came back for later stages.
    for (const type of ['PipelinePlanned', 'StageStarted', 'EvalGatePassed', 'CheckpointSaved', 'NodeLost', 'RunResumed', 'NodeRecovered', 'RunSucceeded']) {
      expect(summary.events_seen).toContain(type);
    }
    expect(demo.output).toContain(`${summary.api_url}/desk`);
    // The desk reads the simulated run on its modelled clock: figures a desk analyst would believe, explained.
    expect(summary.desk_run.interruptions).toBe(1);
    expect(summary.desk_run.goodput).toBeGreaterThan(0.5);
    expect(summary.desk_run.usd_per_productive_gpu_hour).toBeLessThan(2.5 / 0.5);
    expect(demo.output).toMatch(/goodput \d+\.\d %: training steps kept/);
    expect(demo.output).toMatch(/npx ito-admin key create --tenant ten_[0-9a-f]{32} --scopes desk:read/);
    // The build is one line (its output only on failure), and the demo's own words take a "✓" or a "$ command".
    expect(demo.output).toMatch(/building the workspace[^\n]*\n(\r\u001b\[2K)?built in \d+ s\n/);
    expect(demo.output).not.toContain('Tasks:');
    expect(demo.output).not.toContain('▸');
    // What the run did is shown by the real CLI: `ito status --watch` keeps each turn, the pulled node included.
    for (const turn of ['stage data_prep started', 'stage pretrain started on 2 node(s)', 'lost during pretrain', 'resumed pretrain from checkpoint', 'stage rlvr started', 'run succeeded']) {
      expect(demo.output).toContain(turn);
    }
    expect(demo.output).toContain(`ito logs ${summary.run_id} --follow`);
    // Data prep read the sample corpus from the tenant's file root under $ITO_HOME and found exactly what was planted.
    expect(planted('exact') * planted('near') * planted('leak')).toBeGreaterThan(0);
    expect(summary.data_prep).toMatchObject({
      docs_in: PLANTED.length,
      docs_out: PLANTED.length - planted('exact') - planted('near') - planted('leak'),
      removed: { exact: planted('exact'), near: planted('near'), decontamination: planted('leak') },
    });
    expect(summary.data_prep.ref).toMatch(new RegExp(`^file://${home.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/files/ten_[0-9a-f]{32}/sample-corpus\\.jsonl$`));
    expect(demo.output).toContain(`${PLANTED.length} documents in, ${summary.data_prep.docs_out} out (removed ${planted('exact')} exact, ${planted('near')} near duplicates, ${planted('leak')} contaminated`);
    // The data stays for the newcomer to explore.
    expect(existsSync(join(home, 'pg'))).toBe(true);
    expect(existsSync(join(home, 'cli', 'credentials.json'))).toBe(true);
  }, 900_000);
});

describe('a demo step that fails', () => {
  it('stops the demo with the step and its message, exit 1, never a stack trace', async () => {
    if (!existsSync(join(ROOT, 'apps/demo/dist/main.js'))) throw new Error('apps/demo is not built: run npm run build first');
    const taken = createServer();
    const port = await new Promise<number>((r) => taken.listen(0, '127.0.0.1', () => r((taken.address() as { port: number }).port)));
    const home = mkdtempSync(join(tmpdir(), 'ito-demo-fail-'));
    dirs.push(home);
    try {
      const demo = await run(process.execPath, [join(ROOT, 'apps/demo/dist/main.js'), '--port', String(port)], { cwd: ROOT, env: { ITO_HOME: home }, timeoutMs: 60_000 });
      expect(demo.code).toBe(1);
      expect(demo.output).toContain(`✗ start: port ${port} is taken`);
      expectNoSecretsOrStacks(demo.output);
      // Nothing was started: no database under ITO_HOME.
      expect(existsSync(join(home, 'pg'))).toBe(false);
    } finally {
      taken.close();
    }
  });
});
