import { ItoError, checkManifestValue, jsonFailureIssue, manifestDigest, manifestVocabulary, parseStrictJson, type Manifest } from '@ito/contracts';
import { scanForSecrets, scanTextForSecrets } from '@ito/domain';

const REFERENCE_BY_NAME = 'reference credentials by name instead';

/**
 * The manifest gate: one meaning (the strict parser), no secret, the strict schema, and the digest of these
 * exact bytes equals the one the client computed. The secret scan comes before the schema, and covers the raw
 * text when the text does not even parse, so a secret in a broken manifest is still refused as a secret.
 * Refusals name JSON paths or lines, never values, and a path prints only the schema's own names.
 */
export function checkManifest(text: string, submittedDigest: string | undefined): { manifest: Manifest; digest: string } {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) {
    const lines = scanTextForSecrets(text);
    if (lines.length > 0) {
      const at = [...new Set(lines.map((f) => f.line))].slice(0, 20);
      throw new ItoError('manifest_contains_secret', `manifest holds what looks like a secret on line ${at.join(', ')}; ${REFERENCE_BY_NAME}`, {
        findings: lines.slice(0, 50),
      });
    }
    const issue = jsonFailureIssue(parsed.error);
    throw new ItoError('manifest_invalid', `manifest rejected at ${issue.path}: ${issue.message}`, { issues: [issue] });
  }
  const findings = scanForSecrets(parsed.value, { vocabulary: manifestVocabulary() });
  if (findings.length > 0) {
    throw new ItoError(
      'manifest_contains_secret',
      `manifest holds what looks like a secret at ${[...new Set(findings.map((f) => f.path))].slice(0, 20).join(', ')}; ${REFERENCE_BY_NAME}`,
      { findings: findings.slice(0, 50).map((f) => ({ path: f.path, kind: f.kind, where: f.where })) },
    );
  }
  const checked = checkManifestValue(parsed.value);
  if (!checked.ok) {
    const first = checked.issues[0]!;
    throw new ItoError('manifest_invalid', `manifest rejected at ${first.path}: ${first.message}`, { issues: checked.issues });
  }
  const digest = manifestDigest(text);
  if (submittedDigest !== undefined && submittedDigest !== digest) {
    throw new ItoError('manifest_digest_mismatch', `the manifest's bytes hash to ${digest}, not the submitted ${submittedDigest}`);
  }
  return { manifest: checked.manifest, digest };
}
