import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/db.js';
import { processGroup, waitReady } from '../support/processes.js';
import { codeBlocks, markdownSection } from '../support/readme.js';
import { freePort } from '../support/services.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
/** What examples/data/sample-corpus.jsonl was made with (test/fixtures/dataprep/write-example-data.ts). */
const PLANTED = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/dataprep/sample-corpus.truth.json'), 'utf8')) as Array<{ kind: string }>;
const planted = (kind: string) => PLANTED.filter((t) => t.kind === kind).length;
const SERVER = join(ROOT, 'apps/server/dist/main.js');

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * README.md's "A first run, end to end", followed literally: its shell blocks, in order, in one bash at the
 * repository's root. The only differences from a person's terminal are the ones a test needs: the server is
 * started here on a fresh database and a free port (the blocks reach it through ITO_DATABASE_URL and
 * ITO_API_URL, as they would reach a server on another port), and HOME is a scratch directory.
 */
describe("README's first run", () => {
  it('registers the nodes, starts simulated agents and ends in a succeeded run when its blocks run as written', async () => {
    const blocks = codeBlocks(markdownSection(join(ROOT, 'README.md'), 'A first run, end to end'), 'sh');
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    const script = blocks.join('\n');
    // The section must be complete on its own: it registers nodes and starts agents, and watches the run.
    expect(script).toContain('ito-admin node register');
    expect(script).toContain('ito-agent --executor simulated');
    expect(script).toContain('--watch');

    const dir = mkdtempSync(join(tmpdir(), 'ito-readme-run-'));
    dirs.push(dir);
    const db = await freshDatabase();
    const port = await freePort();
    const apiUrl = `http://127.0.0.1:${port}`;
    const procs = processGroup();
    // Started as the section says: nothing simulated on the server, the run's storage is a real directory.
    const section = markdownSection(join(ROOT, 'README.md'), 'A first run, end to end');
    expect(section).toContain('`npm ci && npm start`');
    expect(section).not.toContain('ITO_STORAGE_SIMULATED_SCHEMES');
    const server = procs.start('ito-server', SERVER, ['start'], {
      ITO_HOME: join(dir, 'server'),
      ITO_PORT: String(port),
      ITO_DATABASE_URL: db.url,
      ITO_LOG_LEVEL: 'warn',
    });
    let shellPid: number | undefined;
    try {
      await waitReady(apiUrl, server, 90_000);
      const result = join(dir, 'result.json');
      // After the README's own lines: the run's final state, for the assertions below.
      const full = `set -eo pipefail\n${script}\nnpx ito status --idempotency-key first-run --json > ${JSON.stringify(result)}\n`;
      const shell = spawn('bash', ['-c', full], {
        cwd: ROOT,
        // Its own process group, so whatever the blocks left running (agents) is stopped with it.
        detached: true,
        env: { PATH: process.env.PATH ?? '', HOME: join(dir, 'home'), TMPDIR: dir, ITO_API_URL: apiUrl, ITO_DATABASE_URL: db.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      shellPid = shell.pid;
      let output = '';
      shell.stdout.on('data', (c: Buffer) => (output += c));
      shell.stderr.on('data', (c: Buffer) => (output += c));
      const code = await new Promise<number | null>((r) => shell.once('close', (c) => r(c)));
      expect(code, `${output}\n${procs.transcript()}`).toBe(0);
      const final = JSON.parse(readFileSync(result, 'utf8'));
      expect(final.data.state, output).toBe('succeeded');
      // What a person saw: the plan, the train answer and the watch to the end; never a secret or a stack trace.
      expect(output).toContain('Follow it with: ito status');
      // status --watch kept every turn of the run on screen, in order, however short the stage, and ended on the end.
      const turns = ['data_prep', 'planning', 'pretrain', 'eval_pretrain', 'mid_train', 'long_context', 'sft', 'dpo', 'rlvr', 'eval_post_training'].map((stage) => output.indexOf(`stage ${stage} started`));
      expect(turns.every((at) => at > -1), output).toBe(true);
      expect([...turns].sort((a, b) => a - b)).toEqual(turns);
      expect(output).toContain('gate post_training passed');
      // Data prep read the sample corpus the steps put in the tenant's file root, and found what was planted there.
      const kept = PLANTED.length - planted('exact') - planted('near') - planted('leak');
      expect(planted('exact') * planted('near') * planted('leak')).toBeGreaterThan(0);
      expect(output).toMatch(
        new RegExp(`data file://\\S+/sample-corpus\\.jsonl: ${PLANTED.length} documents in, ${kept} out \\(removed ${planted('exact')} exact, ${planted('near')} near duplicates, ${planted('leak')} contaminated`),
      );
      expect(output.lastIndexOf('run succeeded')).toBeGreaterThan(turns.at(-1)!);
      expect(output).not.toMatch(/ito_(sk|nc)_[A-Za-z0-9_-]{16}/);
      expect(output).not.toMatch(/\n\s+at .+:\d+:\d+\)?\n/);
    } finally {
      if (shellPid) {
        try {
          process.kill(-shellPid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      await procs.stop([server]);
      await db.drop().catch(() => undefined);
    }
  }, 150_000);
});
