import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
/** Small files with one concern each: no source module is longer than this. */
const MAX_LINES = 400;

/** The tracked TypeScript sources of every workspace (`src/`), generated files aside. */
function sourceFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z', '--', 'packages/*/src/**.ts', 'apps/*/src/**.ts'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f.endsWith('.ts') && !f.includes('/generated/') && !/\.generated\.ts$/.test(f));
}

describe('source files', () => {
  it(`are at most ${MAX_LINES} lines each`, () => {
    const files = sourceFiles();
    expect(files.length).toBeGreaterThan(200);
    const long = files
      .map((f) => ({ f, lines: readFileSync(join(ROOT, f), 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ f, lines }) => `${f}: ${lines} lines`);
    expect(long).toEqual([]);
  });
});
