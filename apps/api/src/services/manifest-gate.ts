import { ItoError, manifestDigest, parseManifest, type Manifest } from '@ito/contracts';
import { scanForSecrets } from '@ito/domain';

/**
 * The manifest gate: strict schema, no secret, and the digest of these exact bytes equals the one the client
 * computed. Refusals name JSON paths, never values.
 */
export function checkManifest(text: string, submittedDigest: string | undefined): { manifest: Manifest; digest: string } {
  const parsed = parseManifest(text);
  if (!parsed.ok) {
    const first = parsed.issues[0]!;
    throw new ItoError('manifest_invalid', `manifest rejected at ${first.path}: ${first.message}`, { issues: parsed.issues.slice(0, 50) });
  }
  const findings = scanForSecrets(JSON.parse(text));
  if (findings.length > 0) {
    throw new ItoError(
      'manifest_contains_secret',
      `manifest holds what looks like a secret at ${findings.map((f) => f.path).join(', ')}; reference credentials by name instead`,
      { findings: findings.map((f) => ({ path: f.path, kind: f.kind })) },
    );
  }
  const digest = manifestDigest(text);
  if (submittedDigest !== undefined && submittedDigest !== digest) {
    throw new ItoError('manifest_digest_mismatch', `the manifest's bytes hash to ${digest}, not the submitted ${submittedDigest}`);
  }
  return { manifest: parsed.manifest, digest };
}
