import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Tests import workspace packages from their sources, so a test never runs against a stale build. */
function workspaceAliases(): Record<string, string> {
  const aliases: Record<string, string> = {};
  for (const group of ['packages', 'apps']) {
    for (const name of readdirSync(join(root, group))) {
      aliases[`@ito/${name}`] = join(root, group, name, 'src', 'index.ts');
    }
  }
  return aliases;
}

export default defineConfig({
  root,
  resolve: { alias: workspaceAliases() },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'test/repo/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/chaos/**/*.test.ts'],
    globalSetup: [join(root, 'test/support/global-setup.ts')],
    pool: 'forks',
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', join(root, 'test/support/summary-reporter.ts')],
  },
});
