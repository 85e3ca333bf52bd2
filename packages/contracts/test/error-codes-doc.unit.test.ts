import { describe, expect, it } from 'vitest';
import { CLIENT_MANIFEST_CODES, ERROR_CODES, exitCodeFor, type ErrorCode } from '@ito/contracts';
import { CONTRACT_DOC, code, section, tableRows } from '../../../test/support/contract-doc.js';

/** Codes only the client raises: the server never answers with them, so the contract shows no HTTP status. */
const CLIENT_ONLY: readonly string[] = [...CLIENT_MANIFEST_CODES, 'timeout', 'transport_ambiguous', 'connect_failed', 'audit_verification_failed'];

const documented = tableRows(section(CONTRACT_DOC, 'Error codes')).map(([name, status, exit, retryable, meaning]) => ({
  code: code(name!),
  status: status!,
  exit: exit!,
  retryable: retryable!,
  meaning: meaning!,
}));

describe('docs/contract.md "Error codes" and ERROR_CODES', () => {
  it('document every code ERROR_CODES has, and no code it lacks', () => {
    expect(documented.length).toBeGreaterThanOrEqual(40);
    const names = documented.map((d) => d.code);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it('agree on the HTTP status, the CLI exit code and retryability of each, with a meaning for each', () => {
    for (const d of documented) {
      const c = d.code as ErrorCode;
      expect(d.status, c).toBe(CLIENT_ONLY.includes(c) ? '—' : String(ERROR_CODES[c].status));
      expect(d.exit, c).toBe(String(exitCodeFor(c)));
      expect(d.retryable, c).toBe(ERROR_CODES[c].retryable ? 'yes' : 'no');
      expect(d.meaning.length, c).toBeGreaterThan(10);
    }
  });
});
