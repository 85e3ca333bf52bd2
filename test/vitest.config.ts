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
