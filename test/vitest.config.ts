import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Tests import workspace packages from their sources, so a test never runs against a stale build:
 * `@ito/<name>` is its src/index.ts and a subpath export `@ito/<name>/<entry>` its src/<entry>.ts.
 */
function workspaceAliases(): Array<{ find: RegExp; replacement: string }> {
  const aliases: Array<{ find: RegExp; replacement: string }> = [];
  for (const group of ['packages', 'apps']) {
    for (const name of readdirSync(join(root, group))) {
      const src = join(root, group, name, 'src');
      aliases.push({ find: new RegExp(`^@ito/${name}$`), replacement: join(src, 'index.ts') });
      aliases.push({ find: new RegExp(`^@ito/${name}/([a-z-]+)$`), replacement: join(src, '$1.ts') });
    }
  }
  return aliases;
}

/**
 * The chaos scenarios kept in every run (`npm test`): an agent killed, a node returning, and PyTorch across two
 * agents on s3:// storage with a node killed (the one end-to-end proof that the agents move checkpoints and data
 * through a store). The other eight (`npm run test:chaos`, one at a time) stay out. Measured on 2026-12-06 with the
 * whole folder in the suite (`ITO_TEST_CHAOS=1`, three files at a time, a mutation run on the same cores): the Node 24
 * run alone took 14 min 18 s of CI's 15, and with servers, agents and private stores side by side PostgreSQL ran out
 * of connections (`too many clients`, its default 100) and six scenarios failed. They need the machine to themselves.
 */
const CHAOS_IN_EVERY_RUN = ['test/chaos/agent-kill.e2e.test.ts', 'test/chaos/node-returns.e2e.test.ts', 'test/chaos/torch-multinode.e2e.test.ts', 'test/chaos/ledger-checks.unit.test.ts'];

export default defineConfig({
  root,
  resolve: { alias: workspaceAliases() },
  test: {
    include: [
      'packages/*/test/**/*.test.ts',
      'apps/*/test/**/*.test.ts',
      'test/repo/**/*.test.ts',
      'test/e2e/**/*.test.ts',
      ...(process.env.ITO_TEST_CHAOS === '1' ? ['test/chaos/**/*.test.ts'] : CHAOS_IN_EVERY_RUN),
    ],
    globalSetup: [join(root, 'test/support/global-setup.ts')],
    pool: 'forks',
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', join(root, 'test/support/summary-reporter.ts')],
  },
});
