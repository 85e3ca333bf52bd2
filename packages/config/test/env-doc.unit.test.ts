import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envSchema } from '@ito/config';
import { CONTRACT_DOC, code, section, tableRows } from '../../../test/support/contract-doc.js';

describe('docs/contract.md "Environment" and the configuration schema', () => {
  it('document every variable the processes read, and none they do not', () => {
    const documented = tableRows(section(CONTRACT_DOC, 'Environment')).map(([name]) => code(name!));
    expect(documented.length).toBeGreaterThanOrEqual(10);
    expect([...documented].sort()).toEqual(Object.keys(envSchema.shape).sort());
  });
});

describe('README.md "Configuration" and the configuration schema', () => {
  it('lists every variable the processes read, and none they do not', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const start = readme.indexOf('\n## Configuration\n');
    expect(start).toBeGreaterThan(-1);
    // The list is the section's first paragraph: every `ITO_…` code span in it, in any order, each once.
    const body = readme.slice(start + 1).split(/\n## /)[0]!.split('\n\n')[1]!;
    const listed = [...body.matchAll(/`(ITO_[A-Z0-9_]+)`/g)].map((m) => m[1]!);
    expect(new Set(listed).size).toBe(listed.length);
    expect([...listed].sort()).toEqual(Object.keys(envSchema.shape).sort());
  });
});
