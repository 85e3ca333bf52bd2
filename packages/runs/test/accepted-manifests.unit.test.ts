import { describe, expect, it } from 'vitest';
import { manifestDigest } from '@ito/contracts';
import { EXAMPLE_MANIFEST } from '../../../test/support/api.js';
import { checkManifestOnce } from '../src/manifest/accepted-manifests.js';

describe('the manifest gate, once per distinct manifest', () => {
  it('answers the same bytes with the same frozen manifest, so nobody can change what another request reads', () => {
    const first = checkManifestOnce(EXAMPLE_MANIFEST, manifestDigest(EXAMPLE_MANIFEST));
    const again = checkManifestOnce(EXAMPLE_MANIFEST, undefined);
    expect(again.manifest).toBe(first.manifest);
    expect(again.digest).toBe(manifestDigest(EXAMPLE_MANIFEST));
    expect(Object.isFrozen(first.manifest.budget)).toBe(true);
    expect(() => {
      (first.manifest.budget as { ceiling_usd: number }).ceiling_usd = 1;
    }).toThrow(TypeError);
  });

  it('still refuses a wrong submitted digest for bytes it has accepted', () => {
    checkManifestOnce(EXAMPLE_MANIFEST, undefined);
    expect(() => checkManifestOnce(EXAMPLE_MANIFEST, manifestDigest('other bytes'))).toThrow(expect.objectContaining({ code: 'manifest_digest_mismatch' }));
  });

  it('remembers no refusal: bad bytes are checked, and refused, every time', () => {
    const bad = EXAMPLE_MANIFEST.replace('"schema"', '"surprise": 1, "schema"');
    for (let i = 0; i < 2; i++) expect(() => checkManifestOnce(bad, undefined)).toThrow(expect.objectContaining({ code: 'manifest_invalid' }));
  });
});
