import { describe, expect, it } from 'vitest';
import { CONTRACT_DOC, code, section, tableRows } from '../../../test/support/contract-doc.js';
import { ADMIN_VERBS } from '../src/args/admin-verbs.js';
import { VERBS } from '../src/args/verbs.js';

describe('docs/contract.md "CLI verbs" and the verb tables', () => {
  it('document every ito verb with its availability and side effect, and no verb the CLI lacks', () => {
    const rows = tableRows(section(CONTRACT_DOC, 'CLI verbs')).map(([verb, availability, sideEffect]) => ({ verb: code(verb!), availability, sideEffect }));
    expect(rows.length).toBeGreaterThanOrEqual(20);
    expect(rows.map((r) => r.verb).sort()).toEqual(VERBS.map((v) => v.name).sort());
    for (const v of VERBS) expect(rows.find((r) => r.verb === v.name), v.name).toMatchObject({ availability: v.availability, sideEffect: v.side_effect });
  });

  it('document every ito-admin verb, and no verb ito-admin lacks', () => {
    const rows = tableRows(section(CONTRACT_DOC, 'ito-admin')).map(([verb]) => code(verb!));
    expect(rows.length).toBeGreaterThanOrEqual(5);
    expect(rows.sort()).toEqual(ADMIN_VERBS.map((v) => v.name).sort());
  });
});
