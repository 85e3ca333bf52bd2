// @ts-check
/**
 * Stryker over one module of test/mutation/modules.ts at a time (ITO_MUTATION_MODULE); `npm run test:mutation`
 * runs them in turn. Not part of `npm test` or CI: a full run takes tens of minutes on 2 cores.
 */
import { MUTATION_MODULES } from './modules.mjs';

const name = process.env.ITO_MUTATION_MODULE ?? '';
const module = MUTATION_MODULES[name];
if (!module) throw new Error(`ITO_MUTATION_MODULE must name one of: ${Object.keys(MUTATION_MODULES).join(', ')}`);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner', '@stryker-mutator/typescript-checker'],
  vitest: { configFile: 'test/mutation/vitest.config.ts', related: false },
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  mutate: module.mutate,
  // The CI's downloaded toolchains (a link to a shared folder in a worktree) are not needed by any test.
  ignorePatterns: ['/.ci/downloads'],
  coverageAnalysis: 'perTest',
  concurrency: module.concurrency ?? 2,
  // Over the test's own time: 30 s for tests that start servers; pure modules set less, so a mutant that loops
  // forever costs seconds, not a minute.
  timeoutMS: module.timeoutMS ?? 30_000,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: `.stryker/reports/${name}.json` },
  incrementalFile: `.stryker/incremental/${name}.json`,
  tempDirName: `.stryker/tmp-${name}`,
  cleanTempDir: 'always',
  thresholds: { high: 90, low: 85, break: null },
};
