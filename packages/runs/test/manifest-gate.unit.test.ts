import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ItoError, manifestDigest } from '@ito/contracts';
import { checkManifest } from '../src/manifest/manifest-gate.js';

/**
 * The manifest gate on its own: which refusal, in which order, and what each one says. The HTTP route's tests
 * (hostile-manifests.int) show the same refusals through the API with nothing written.
 */
const EXAMPLE = readFileSync(new URL('../../../examples/manifest.json', import.meta.url), 'utf8');
const TOKEN = 'gh' + 'p_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';

function refusal(text: string, digest?: string): { code: string; message: string; details: Record<string, unknown> | undefined } {
  try {
    checkManifest(text, digest);
  } catch (err) {
    if (!(err instanceof ItoError)) throw err;
    expect(err.message).not.toContain(TOKEN);
    expect(JSON.stringify(err.details ?? {})).not.toContain(TOKEN);
    return { code: err.code, message: err.message, details: err.details };
  }
  throw new Error('expected a refusal');
}

describe('the manifest gate', () => {
  it('accepts the example and returns the digest of its exact bytes, with or without a submitted digest', () => {
    const digest = manifestDigest(EXAMPLE);
    expect(checkManifest(EXAMPLE, digest).digest).toBe(digest);
    expect(checkManifest(EXAMPLE, undefined)).toMatchObject({ digest, manifest: { schema: 'ito.train.manifest/v1' } });
  });

  it('refuses bytes that hash to another digest, naming both', () => {
    const other = `sha256:${'0'.repeat(64)}`;
    expect(refusal(EXAMPLE, other)).toEqual({
      code: 'manifest_digest_mismatch',
      message: `the manifest's bytes hash to ${manifestDigest(EXAMPLE)}, not the submitted ${other}`,
      details: undefined,
    });
  });

  it('refuses a secret in text that does not parse by line, each line once, and says what to do instead', () => {
    const lines = ['{', `"a": "${TOKEN}" "${TOKEN}"`, '"b": 1,,', `"c": "${TOKEN}"`];
    const err = refusal(lines.join('\n'));
    expect(err.code).toBe('manifest_contains_secret');
    expect(err.message).toBe('manifest holds what looks like a secret on line 2, 4; reference credentials by name instead');
    expect(err.details).toEqual({ findings: [{ line: 2, kind: 'github_token' }, { line: 4, kind: 'github_token' }] });
  });

  it('bounds what a refusal lists: 20 lines in the message, 50 findings in the details', () => {
    const text = `{\n${Array.from({ length: 60 }, () => `"k": "${TOKEN}",,`).join('\n')}`;
    const err = refusal(text);
    expect(err.message).toBe(`manifest holds what looks like a secret on line ${Array.from({ length: 20 }, (_, i) => i + 2).join(', ')}; reference credentials by name instead`);
    expect((err.details!.findings as unknown[]).length).toBe(50);
  });

  it('refuses a secret in a parsed manifest by path, each path once, before the schema', () => {
    const m = JSON.parse(EXAMPLE) as { name: string; data: Array<{ ref: string }> };
    m.name = `${TOKEN} ${TOKEN}`;
    m.data[0]!.ref = `s3://bucket/${TOKEN}`;
    const err = refusal(JSON.stringify({ ...m, unknown_field: 1 }));
    expect(err.code).toBe('manifest_contains_secret');
    expect(err.message).toBe('manifest holds what looks like a secret at $.name, $.data[0].ref; reference credentials by name instead');
    expect(err.details).toEqual({
      findings: [
        { path: '$.name', kind: 'github_token', where: 'value' },
        { path: '$.data[0].ref', kind: 'github_token', where: 'value' },
      ],
    });
  });

  it('bounds the paths a parsed refusal names to 20 and its findings to 50', () => {
    const m = JSON.parse(EXAMPLE) as { data: Array<Record<string, unknown>> };
    m.data = Array.from({ length: 60 }, () => ({ ref: TOKEN }));
    const err = refusal(JSON.stringify(m));
    expect(err.message).toBe(`manifest holds what looks like a secret at ${Array.from({ length: 20 }, (_, i) => `$.data[${i}].ref`).join(', ')}; reference credentials by name instead`);
    expect((err.details!.findings as unknown[]).length).toBe(50);
  });

  it('refuses text that is not one JSON meaning, and a manifest the schema refuses, at the first issue', () => {
    expect(refusal('{"a": 1, "a": 2}')).toMatchObject({ code: 'manifest_invalid', message: expect.stringMatching(/^manifest rejected at \$\["<key #2>"\]: not accepted as JSON: duplicate key/) });
    const err = refusal('{}');
    expect(err.code).toBe('manifest_invalid');
    expect(err.message).toBe('manifest rejected at $.schema: Invalid input: expected "ito.train.manifest/v1"');
    expect((err.details!.issues as unknown[]).length).toBeGreaterThan(1);
  });
});
