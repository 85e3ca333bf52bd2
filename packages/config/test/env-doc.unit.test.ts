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
