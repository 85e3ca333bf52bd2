import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** Every workspace's source folder, as the layering rules (.dependency-cruiser.cjs) judge them. */
function sourceFolders(): string[] {
  return ['packages', 'apps'].flatMap((group) =>
    readdirSync(join(ROOT, group), { withFileTypes: true })
      .filter((d) => d.isDirectory() && readdirSync(join(ROOT, group, d.name)).includes('src'))
      .map((d) => `${group}/${d.name}/src`),
  );
}

interface Cruise {
  summary: { violations: Array<{ from: string; to: string; rule: { name: string } }>; totalCruised: number };
}

describe('the layering of the sources', () => {
  it('keeps the rules written in .dependency-cruiser.cjs and test/README.md: packages under apps, pure packages without I/O, apps on packages only, no cycles', () => {
    const out = execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs'), '--config', '.dependency-cruiser.cjs', '--output-type', 'json', ...sourceFolders()],
      { cwd: ROOT, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
    );
    const cruise = JSON.parse(out) as Cruise;
    expect(cruise.summary.totalCruised).toBeGreaterThan(300);
    expect(cruise.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)).toEqual([]);
  });
});
