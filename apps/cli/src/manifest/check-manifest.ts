import { ItoError, jsonFailureIssue, parseStrictJson } from '@ito/contracts';

/**
 * The local half of "one manifest, one meaning": the same strict parser the server uses, so a manifest with a
 * duplicate key (which the approver and the run could read differently), a prototype key or runaway nesting
 * is refused before a byte is sent. The schema itself is the server's to check.
 */
export function refuseAmbiguousManifest(text: string, path: string): void {
  const parsed = parseStrictJson(text);
  if (parsed.ok) return;
  const issue = jsonFailureIssue(parsed.error);
  throw new ItoError('manifest_invalid', `manifest ${path} is not accepted at ${issue.path}: ${issue.message}`, { issues: [issue] });
}
