import { manifestDigest, type Manifest } from '@ito/contracts';
import { checkManifest } from './manifest-gate.js';

/** How many accepted manifests are remembered; a train usually repeats the bytes its confirmation checked. */
const REMEMBERED = 256;
const accepted = new Map<string, Manifest>();

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * The manifest gate, run once per distinct manifest: parsing, the schema and the secret scan depend on the bytes
 * alone, so bytes already accepted (keyed by their SHA-256) are accepted again without redoing them. Only
 * accepted manifests are remembered, frozen so that no caller can change what another reads; a refusal, or a
 * submitted digest that differs, always goes through the full gate.
 */
export function checkManifestOnce(text: string, submittedDigest: string | undefined): { manifest: Manifest; digest: string } {
  const digest = manifestDigest(text);
  const known = accepted.get(digest);
  if (known && (submittedDigest === undefined || submittedDigest === digest)) {
    accepted.delete(digest);
    accepted.set(digest, known);
    return { manifest: known, digest };
  }
  const checked = checkManifest(text, submittedDigest);
  accepted.set(checked.digest, deepFreeze(checked.manifest));
  if (accepted.size > REMEMBERED) accepted.delete(accepted.keys().next().value!);
  return checked;
}
