import { hash, randomBytes } from 'node:crypto';

/**
 * Credentials are random secrets with a readable kind prefix, so a leaked one is recognisable in a scan:
 * `ito_sk_…` for API keys, `ito_nc_…` for node credentials. Only their SHA-256 is stored; with 256 random
 * bits a fast hash is enough (there is nothing to brute-force).
 */
export type CredentialKind = 'sk' | 'nc';

export function newSecret(kind: CredentialKind): string {
  return `ito_${kind}_${randomBytes(32).toString('base64url')}`;
}

/** One-shot `hash`: every heartbeat hashes its credential, and it costs about a third of createHash's object. */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Exactly what `newSecret` makes: anything else cannot be a credential and is refused without a lookup. */
const CREDENTIAL_SHAPE = /^ito_(?:sk|nc)_[A-Za-z0-9_-]{43}$/;

export function isWellFormedCredential(secret: string): boolean {
  return CREDENTIAL_SHAPE.test(secret);
}
