import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const REPORTER = join(ROOT, 'test', 'support', 'summary-reporter.ts');
const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs a real vitest over the given test files with only the summary reporter; returns its last line and exit code. */
function runSuite(files: Record<string, string>): { line: string; status: number | null } {
  const dir = mkdtempSync(join(tmpdir(), 'ito-summary-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const res = spawnSync(process.execPath, [VITEST, 'run', '--root', dir, '--globals', `--reporter=${REPORTER}`], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', CI: 'true' },
  });
  const lines = res.stdout.trim().split('\n');
  return { line: lines.at(-1) ?? '', status: res.status };
}

const passing = "it('passes', () => expect(1).toBe(1));\n";

describe('the summary line', () => {
  it('counts a test file that fails to load as a failure', () => {
    const r = runSuite({ 'ok.test.ts': passing, 'broken.test.ts': "throw new Error('does not load');\n" });
    expect(r.status).toBe(1);
    expect(r.line).toBe('1 passed, 1 failed, 0 skipped (1 test file failed outside its tests)');
  });

  it('counts a file whose hook throws once, and failed tests one each', () => {
    const r = runSuite({
      'hook.test.ts': `afterAll(() => { throw new Error('hook'); });\n${passing}`,
      'two.test.ts': "it('a', () => expect(1).toBe(2));\nit('b', () => expect(1).toBe(2));\nit.skip('c', () => undefined);\n",
    });
    expect(r.status).toBe(1);
    expect(r.line).toBe('1 passed, 3 failed, 1 skipped (1 test file failed outside its tests)');
  });

  it('reads 0 failed only on a run that passed', () => {
    const r = runSuite({ 'ok.test.ts': passing });
    expect(r.status).toBe(0);
    expect(r.line).toBe('1 passed, 0 failed, 0 skipped');
  });
});
