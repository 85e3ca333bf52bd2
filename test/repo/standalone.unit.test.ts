import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
/** Built or installed, never tracked (see .gitignore). */
const UNTRACKED_DIRS = new Set(['.git', 'node_modules', 'dist', '.turbo', 'coverage', '.ito']);

/** The tracked files (a checkout without git: every file outside the ignored directories). */
function trackedFiles(): string[] {
  try {
    return execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  } catch {
    const out: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
        if (entry.isDirectory() && !UNTRACKED_DIRS.has(entry.name)) walk(join(dir, entry.name));
        else if (entry.isFile()) out.push(join(dir, entry.name));
      }
    };
    walk('');
    return out;
  }
}

function textOf(file: string): string | null {
  const bytes = readFileSync(join(ROOT, file));
  return bytes.includes(0) ? null : bytes.toString('utf8');
}

/** Where a path climbing `ups` directories from the file's own directory lands, relative to the root. */
function climbsOut(file: string, ups: number): boolean {
  const target = relative(ROOT, resolve(ROOT, dirname(file), ...Array<string>(ups).fill('..')));
  return target === '..' || target.startsWith(`..${sep}`);
}

// Spelled in pieces so this file does not itself contain what it looks for.
const SIBLING_DIR = ['..', 'shared'].join('/');
const MACHINE_ROOT = `/${'work'}/`;

/** Everything in a tracked file that names a place outside the repository, as `file: what`. */
function outsideReferences(file: string, text: string): string[] {
  const found: string[] = [];
  if (text.includes(SIBLING_DIR)) found.push(`${file}: names ${SIBLING_DIR}`);
  if (text.includes(MACHINE_ROOT)) found.push(`${file}: names ${MACHINE_ROOT}`);
  // A relative path written as one string: '../../x', ](../x), "../x".
  for (const m of text.matchAll(/(?<![\w.])((?:\.\.\/)+)/g)) {
    const ups = m[1]!.length / 3;
    if (climbsOut(file, ups)) found.push(`${file}: ${m[0]}… climbs ${ups} above its directory`);
  }
  // A relative path written as arguments: resolve(import.meta.dirname, '..', '..').
  for (const m of text.matchAll(/(?:'\.\.'(?:\s*,\s*)?)+/g)) {
    const ups = (m[0].match(/'\.\.'/g) ?? []).length;
    if (climbsOut(file, ups)) found.push(`${file}: ${ups} '..' arguments climb above its directory`);
  }
  return found;
}

describe('the repository stands alone', () => {
  const files = trackedFiles();

  it('finds the tracked files it checks', () => {
    expect(files.length).toBeGreaterThan(150);
    expect(files).toContain('docs/contract.md');
    expect(files).toContain('examples/manifest.json');
  });

  it('no tracked file names a path outside the repository', () => {
    const texts = files.flatMap((f) => {
      const t = textOf(f);
      return t === null ? [] : [[f, t] as const];
    });
    expect(texts.length).toBeGreaterThan(150);
    expect(texts.flatMap(([f, t]) => outsideReferences(f, t))).toEqual([]);
  });

  it('catches each kind of outside reference (the check itself)', () => {
    expect(outsideReferences('a/b/c.ts', `new URL('${'../'.repeat(3)}elsewhere/x.md', import.meta.url)`)).toEqual([expect.stringMatching(/climbs 3 above/)]);
    expect(outsideReferences('a/b/c.ts', `readFileSync('x/${SIBLING_DIR}/x.md')`)).toEqual([`a/b/c.ts: names ${SIBLING_DIR}`]);
    expect(outsideReferences('README.md', `see ${MACHINE_ROOT}main`)).toHaveLength(1);
    expect(outsideReferences('a/b.ts', "resolve(import.meta.dirname, '..', '..', 'x')")).toHaveLength(1);
    expect(outsideReferences('a/b/c.ts', "resolve(import.meta.dirname, '..', '..', 'x'); new URL('../../x', u)")).toEqual([]);
  });
});
